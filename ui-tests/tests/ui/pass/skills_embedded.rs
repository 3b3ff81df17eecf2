// A folder of skills embedded at compile time, its files and frontmatter
// as written.
fn main() {
    let skills = gonk_tools::embed_skills!("$GONK_UI_TESTS/tests/ui/skills/good");
    assert_eq!(skills.len(), 1);
    let skill = &skills[0];
    assert_eq!(skill.name(), "tidy-up");
    assert_eq!(skill.uri(), "skill://tidy-up/SKILL.md");
    assert_eq!(skill.frontmatter()["allowed-tools"], "Bash");
    let paths: Vec<&str> = skill.files().iter().map(|f| f.path()).collect();
    assert_eq!(paths, ["SKILL.md", "scripts/tidy.sh"]);
    let registry = gonk_tools::ToolRegistry::new();
    registry.register_skills(skills).unwrap();
    assert!(registry.skill("skill://tidy-up/SKILL.md").is_some());
}
