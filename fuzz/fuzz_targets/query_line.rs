#![no_main]
//! See `walksurf_fuzz::query_line`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| walksurf_fuzz::query_line(data));
