//! The macro surface: tools defined with `#[tool]` and called through the
//! generated typed client, the schemas the derives produce, resources and
//! prompts from `#[resource]` / `#[prompt]` served by the registry, and a
//! new user's first crate built from the README's set-up.

mod client;
mod fresh_crate;
mod primitives;
mod schemas;
