// A SKILL.md whose frontmatter is YAML but not a mapping of fields.
fn main() {
    let _ = gonk_tools::embed_skills!("$GONK_UI_TESTS/tests/ui/skills/bad-frontmatter");
}
