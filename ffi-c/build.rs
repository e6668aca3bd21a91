//! The SONAME of libechomq.so, set only where a release asks for it.
//!
//! scripts/dist.sh builds with `EMQ_SONAME=libechomq.so.<abi>` and ships the
//! library as `libechomq.so.<version>` with the usual symlinks, so programs
//! record the ABI name and keep working across compatible updates. Without the
//! variable the library has no SONAME: programs in this repository link
//! `target/release/libechomq.so` by path, and a SONAME would make them look
//! for a file that cargo does not create.
fn main() {
    println!("cargo:rerun-if-env-changed=EMQ_SONAME");
    let Ok(soname) = std::env::var("EMQ_SONAME") else {
        return;
    };
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
}
