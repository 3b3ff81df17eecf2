use gonk_tools::prelude::*;

pub struct Notes;

#[tools]
impl Notes {
    /// Count notes.
    #[tool]
    pub async fn count(self) -> u32 {
        0
    }
}

fn main() {}
