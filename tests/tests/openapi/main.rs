//! OpenAPI documents as source catalogs: `OpenApiSource` against an HTTP
//! API served in process (the call mapping, errors, bounds and hostile
//! documents), a real FastAPI service behind `gonk-gateway`, called
//! by the official Python MCP client, and transforms in their typed form
//! (a wrapper `#[tool]` over the original's typed client).

mod fastapi;
mod published;
mod source;
mod typed_transform;
