//! OpenAPI documents as source catalogs: `OpenApiSource` against an HTTP
//! API served in process (the call mapping, errors, bounds and hostile
//! documents), and a real FastAPI service behind `gonk-gateway`, called
//! by the official Python MCP client.

mod fastapi;
mod published;
mod source;
