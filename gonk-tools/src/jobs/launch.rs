//! [`launch`]: a typed client starts a detached tool as a background job
//! and gets its handle (a typed call waits for the output instead).

use schemars::JsonSchema;
use serde::Serialize;

use super::JobHandle;
use crate::client::{decode_outcome, ClientError, Transport};
use crate::tool::Tool;

/// Starts detached tool `T` as a background job over `transport` and
/// returns its handle; `jobs.result` with the handle's id gives the output
/// later. For a tool that is not detached this runs the call and fails
/// with [`ClientError::Decode`], there being no handle.
pub async fn launch<T>(
    transport: &(impl Transport + ?Sized),
    input: T::Input,
) -> Result<JobHandle, ClientError>
where
    T: Tool,
    T::Input: Serialize + JsonSchema,
{
    let input = crate::schema::encode_input(&input).map_err(|source| ClientError::Encode {
        tool: T::NAME,
        source,
    })?;
    decode_outcome(T::NAME, transport.invoke(T::NAME, input), |_| {})
        .await
        .map(|output| output.data)
}
