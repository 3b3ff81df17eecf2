// A SKILL.md whose frontmatter is not valid YAML.
fn main() {
    let _ = gonk_tools::embed_skills!("$GONK_UI_TESTS/tests/ui/skills/bad-frontmatter");
}
