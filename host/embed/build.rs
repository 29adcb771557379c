//! Writes the C header of the embedding ABI (`src/ffi.rs`) with cbindgen into OUT_DIR; the
//! crate names it (`HEADER`), and a test checks `include/aura.h`, the copy apps read, is the
//! same.

fn main() {
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    println!("cargo:rerun-if-changed=src/ffi.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = cbindgen::Config::from_file(format!("{crate_dir}/cbindgen.toml"))
        .expect("host/embed/cbindgen.toml reads");
    let header = format!("{out_dir}/aura.h");
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(format!("{crate_dir}/src/ffi.rs"))
        .generate()
        .expect("the C ABI in src/ffi.rs makes a header")
        .write_to_file(&header);
    println!("cargo:rustc-env=AURA_EMBED_HEADER={header}");
}
