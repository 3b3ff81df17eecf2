//! Procedural macros for [`gonk-tools`](https://docs.rs/gonk-tools). Use them
//! through `gonk_tools`, which re-exports them.
