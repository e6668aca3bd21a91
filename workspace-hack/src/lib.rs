//! Nothing to call: this crate only pins one feature set for the dependencies
//! that the Python extension, the Node addon, the C library and `emq` share,
//! so the core compiles once for all of them (see its Cargo.toml).
