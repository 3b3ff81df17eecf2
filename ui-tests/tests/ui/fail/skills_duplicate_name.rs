// The same skill name in two folders of skills.
fn main() {
    let _ = gonk_tools::embed_skills!(
        "$GONK_UI_TESTS/tests/ui/skills/duplicate-a",
        "$GONK_UI_TESTS/tests/ui/skills/duplicate-b"
    );
}
