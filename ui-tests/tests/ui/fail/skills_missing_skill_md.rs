// A skill folder without a SKILL.md.
fn main() {
    let _ = gonk_tools::embed_skills!("$GONK_UI_TESTS/tests/ui/skills/missing");
}
