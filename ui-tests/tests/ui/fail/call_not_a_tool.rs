use gonk_tools::prelude::*;

pub struct NotATool;

/// Calls something that is not a tool.
#[tool]
async fn caller(ctx: ToolContext) -> Result<(), ToolError> {
    ctx.call::<NotATool>(()).await?;
    Ok(())
}

fn main() {}
