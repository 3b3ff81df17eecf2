use serde_json::json;

use super::*;

fn frontmatter(value: serde_json::Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn pdf() -> Skill {
    Skill::new(
        frontmatter(json!({"name": "pdf-processing", "description": "PDFs", "license": "MIT"})),
        [
            SkillFile::new("SKILL.md", b"---\nname: pdf-processing\n---\n".as_slice()),
            SkillFile::new("references/FORMS.md", b"forms".as_slice()),
            SkillFile::new("references/deep/x.txt", b"x".as_slice()),
            SkillFile::new("run.py", b"print(1)".as_slice()),
        ],
    )
    .unwrap()
}

#[test]
fn files_have_uris_digests_and_sizes() {
    let skill = pdf();
    assert_eq!(skill.uri(), "skill://pdf-processing/SKILL.md");
    let forms = skill
        .file_at("skill://pdf-processing/references/FORMS.md")
        .unwrap();
    assert_eq!(forms.size(), 5);
    assert_eq!(forms.digest(), sha256_digest(b"forms"));
    assert_eq!(forms.digest().len(), 71);
    assert!(skill.file_at("skill://pdf-processing/nope.md").is_none());
    assert!(skill.file_at("skill://other/SKILL.md").is_none());
    assert_eq!(skill.frontmatter()["license"], "MIT");
}

#[test]
fn the_digest_is_sha256_in_lowercase_hex() {
    assert_eq!(
        sha256_digest(b""),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn directories_list_direct_children_and_folders_once() {
    let skill = pdf();
    let root: Vec<String> = skill
        .directory("skill://pdf-processing")
        .unwrap()
        .iter()
        .map(|e| match e {
            SkillEntry::Directory(path) => format!("{path}/"),
            SkillEntry::File(file) => file.path().to_owned(),
        })
        .collect();
    assert_eq!(root, ["SKILL.md", "references/", "run.py"]);
    let references: Vec<String> = skill
        .directory("skill://pdf-processing/references")
        .unwrap()
        .iter()
        .map(|e| e.path().to_owned())
        .collect();
    assert_eq!(references, ["references/FORMS.md", "references/deep"]);
    assert!(skill.directory("skill://pdf-processing/SKILL.md").is_none());
    assert!(skill.directory("skill://pdf-processing/missing").is_none());
}

#[test]
fn a_skill_without_skill_md_or_with_a_bad_name_is_refused() {
    let error = Skill::new(
        frontmatter(json!({"name": "x", "description": "d"})),
        [SkillFile::new("README.md", b"".as_slice())],
    )
    .unwrap_err();
    assert!(error.to_string().contains("no SKILL.md"), "{error}");
    let error = Skill::new(
        frontmatter(json!({"name": "Bad--Name", "description": "d"})),
        [SkillFile::new("SKILL.md", b"".as_slice())],
    )
    .unwrap_err();
    assert!(error.to_string().contains("naming rule"), "{error}");
    let error = Skill::new(
        frontmatter(json!({"name": "ok"})),
        [SkillFile::new("SKILL.md", b"".as_slice())],
    )
    .unwrap_err();
    assert!(error.to_string().contains("description"), "{error}");
    let error = Skill::new(
        frontmatter(json!({"name": "ok", "description": "d"})),
        [
            SkillFile::new("SKILL.md", b"".as_slice()),
            SkillFile::new("../escape", b"".as_slice()),
        ],
    )
    .unwrap_err();
    assert!(error.to_string().contains("plain relative path"), "{error}");
}

#[cfg(feature = "skills")]
mod from_disk {
    use super::*;

    #[test]
    fn frontmatter_is_parsed_verbatim() {
        let map = parse_frontmatter(
            "\u{feff}---\r\nname: a\r\ndescription: b\r\nmetadata:\r\n  n: 1\r\n---\r\nbody",
        )
        .unwrap();
        assert_eq!(
            Value::Object(map),
            json!({"name": "a", "description": "b", "metadata": {"n": 1}})
        );
        assert!(parse_frontmatter("no frontmatter").is_err());
        assert!(parse_frontmatter("---\nname: [unclosed\n---\n").is_err());
        assert!(parse_frontmatter("---\n- a list\n---\n").is_err());
    }

    #[test]
    fn a_folder_loads_and_an_edit_after_loading_shows_in_the_bytes_not_the_digest() {
        let root = std::env::temp_dir().join(format!("gonk-skills-{}", std::process::id()));
        let skill_dir = root.join("triage");
        std::fs::create_dir_all(skill_dir.join("refs")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        std::fs::write(
            skill_dir.join("SKILL.md"),
            "---\nname: triage\ndescription: Sort things.\n---\nBody\n",
        )
        .unwrap();
        std::fs::write(skill_dir.join("refs/a.md"), "a").unwrap();
        let skills = Skill::load_dir(&root).unwrap();
        assert_eq!(skills.len(), 1);
        let skill = &skills[0];
        assert_eq!(skill.name(), "triage");
        let paths: Vec<&str> = skill.files().iter().map(SkillFile::path).collect();
        assert_eq!(paths, ["SKILL.md", "refs/a.md"]);
        std::fs::write(skill_dir.join("refs/a.md"), "changed").unwrap();
        let file = &skill.files()[1];
        assert_eq!(file.size(), 1);
        assert_eq!(&*file.read().unwrap(), b"changed");
        assert_ne!(sha256_digest(&file.read().unwrap()), file.digest());

        std::fs::create_dir_all(root.join("other")).unwrap();
        std::fs::write(
            root.join("other/SKILL.md"),
            "---\nname: not-other\ndescription: d\n---\n",
        )
        .unwrap();
        let error = Skill::load_dir(&root).unwrap_err();
        assert!(error.to_string().contains("not its folder's"), "{error}");
        std::fs::remove_file(root.join("other/SKILL.md")).unwrap();
        let error = Skill::load_dir(&root).unwrap_err();
        assert!(error.to_string().contains("has no SKILL.md"), "{error}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
