//! The tool-name rule and the client-method rule, from the one source the
//! macros check them with at compile time (`gonk-tools-macros/src/rules.rs`,
//! expanded here by `__rules!`): registration checks names made at run
//! time with the same rule and the same words, and `toolset!` evaluates
//! [`client_method_is`] and [`same_client_method`] in constants.

gonk_tools_macros::__rules!();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_has_the_macros_rules() {
        assert_eq!(check_tool_name("notes.search"), Ok(()));
        assert_eq!(
            check_tool_name("notes search"),
            Err(NameError::BadChar { bad: ' ' })
        );
        assert!(client_method_is("notes.createNote", "notes_create_note"));
        assert!(client_method_is("Tool_000", "tool_000"));
        assert!(same_client_method("notes.search", "notes-search"));
        assert!(!same_client_method("notes.search", "notes.find"));
    }
}
