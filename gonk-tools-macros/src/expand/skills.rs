//! `embed_skills!`'s expansion: a `Vec<Skill>` built from the checked
//! model, each file's bytes embedded with `include_bytes!` (so editing a
//! file rebuilds the crate).

use proc_macro2::TokenStream;
use quote::quote;

use crate::internals;

/// The expansion of `embed_skills!(input)`, or its errors.
pub fn embed_skills(input: TokenStream) -> TokenStream {
    let skills = match internals::skills::skills(input) {
        Ok(skills) => skills,
        Err(error) => {
            let error = error.to_compile_error();
            // An expression still, so the caller's code type-checks.
            return quote!({ #error ::std::vec::Vec::<::gonk_tools::skill::Skill>::new() });
        }
    };
    let made = skills.iter().map(|skill| {
        let name = &skill.name;
        let frontmatter = &skill.frontmatter;
        let files = skill.files.iter().map(|(path, absolute)| {
            let absolute = absolute.to_string_lossy();
            quote!((#path, ::core::include_bytes!(#absolute) as &'static [u8]))
        });
        quote!(::gonk_tools::skill::embedded(#name, #frontmatter, &[#(#files),*]))
    });
    quote!(::std::vec![#(#made),*] as ::std::vec::Vec<::gonk_tools::skill::Skill>)
}
