#![no_main]
//! See `walksurf_fuzz::surface_from_bytes`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| walksurf_fuzz::surface_from_bytes(data));
