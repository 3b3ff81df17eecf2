//! Every return form.
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use gonk_tools::prelude::*;

pub struct MyError;

impl From<MyError> for ToolError {
    fn from(_: MyError) -> ToolError {
        ToolError::new(ErrorCode::custom("MINE"), "mine")
    }
}

/// Returns nothing.
#[tool]
async fn unit() {}

/// Returns a plain value.
#[tool]
async fn plain() -> Vec<u8> { vec![1] }

/// Returns a Result with ToolError.
#[tool]
async fn result_tool_error() -> Result<u8, ToolError> { Ok(2) }

/// Returns a Result with an error that converts into ToolError.
#[tool]
async fn result_custom() -> Result<u8, MyError> { Err(MyError) }

/// Returns a one-argument Result alias.
#[tool]
async fn result_alias() -> std::io::Result<u8> { Ok(3) }

/// Returns data plus display.
#[tool]
async fn output() -> ToolOutput<u8> { ToolOutput::new(4).with_display("four") }

/// Returns a Result of ToolOutput.
#[tool]
async fn result_output() -> Result<ToolOutput<u8>, ToolError> { Ok(ToolOutput::new(5)) }

/// Returns a stream.
#[tool]
async fn streaming() -> impl Stream<Item = ToolEvent<u8>> {
    gonk_tools::stream! {
        yield ToolEvent::progress(50.0, None);
        yield ToolEvent::result(6);
    }
}

/// Returns a boxed stream.
#[tool]
async fn boxed_stream() -> BoxStream<'static, ToolEvent<u8>> {
    futures::stream::iter([ToolEvent::result(7)]).boxed()
}

/// Returns a value without a schema.
#[tool(output_schema = false, type_name = NoSchemaTool)]
async fn no_schema() -> NoSchema { NoSchema(8) }

#[derive(Serialize)]
pub struct NoSchema(u8);

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    registry
        .register_all([
            Unit::definition(),
            Plain::definition(),
            ResultToolError::definition(),
            ResultCustom::definition(),
            ResultAlias::definition(),
            Output::definition(),
            ResultOutput::definition(),
            Streaming::definition(),
            BoxedStream::definition(),
            NoSchemaTool::definition(),
        ])
        .unwrap_or_else(|e| panic!("{e}"));
    let call = |name: &str| {
        let events = registry.invoke(name, json!({}), ToolContext::new());
        async move { collect_tool_outcome(events, |_| {}).await }
    };
    assert_eq!(call("unit").await.unwrap().data, json!(null));
    assert_eq!(call("plain").await.unwrap().data, json!([1]));
    assert_eq!(call("result_tool_error").await.unwrap().data, 2);
    assert_eq!(call("result_custom").await.unwrap_err().code, ErrorCode::custom("MINE"));
    assert_eq!(call("result_alias").await.unwrap().data, 3);
    let out = call("output").await.unwrap();
    assert_eq!((out.data, out.display), (json!(4), Some(ToolDisplay::Text("four".into()))));
    assert_eq!(call("result_output").await.unwrap().data, 5);
    assert_eq!(call("streaming").await.unwrap().data, 6);
    assert_eq!(call("boxed_stream").await.unwrap().data, 7);
    assert_eq!(call("no_schema").await.unwrap().data, 8);
    assert!(registry.get("no_schema").unwrap().output_schema.is_none());
    assert!(registry.get("plain").unwrap().output_schema.is_some());
}
