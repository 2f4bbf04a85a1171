#![no_main]
//! See `walksurf_fuzz::ingest`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| walksurf_fuzz::ingest(data));
