// A SKILL.md whose `name` is not its folder's.
fn main() {
    let _ = gonk_tools::embed_skills!("$GONK_UI_TESTS/tests/ui/skills/mismatch");
}
