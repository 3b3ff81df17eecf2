//! Published OpenAPI documents no one here wrote, from the npm package
//! `@readme/oas-examples` (pinned in `.ci/install-mcp-clients`): the
//! Swagger Petstore 3.0 imports and its surface is pinned, from its JSON
//! and from its YAML alike; each recursive request body of another is
//! refused by name.

use std::path::PathBuf;

use gonk_tools::adapters::openapi::{OpenApiSource, OpenApiSpec, RouteMap};
use gonk_tools::prelude::*;
use gonk_tools_tests::mcp_clients::clients;

fn published(name: &str) -> PathBuf {
    let format = if name.ends_with(".yaml") {
        "yaml"
    } else {
        "json"
    };
    clients()
        .node_dir
        .join("node_modules/@readme/oas-examples/3.0")
        .join(format)
        .join(name)
}

#[tokio::test]
async fn the_swagger_petstore_3_0_imports_and_its_surface_is_pinned() {
    let registry = ToolRegistry::new();
    // Its server is plain http:// to a remote host, which credentials
    // never travel to: the HTTPS base is given.
    let source = OpenApiSource::builder("petstore", OpenApiSpec::file(published("petstore.json")))
        .base_url("https://petstore.swagger.io/v2")
        .connect(&registry)
        .await
        .expect("the Petstore imports");
    assert_eq!(registry.names().len(), 20, "{:?}", registry.names());
    assert_eq!(source.skipped(), []);
    gonk_tools::assert_surface!(registry, "golden/openapi/petstore.json");
}

#[tokio::test]
async fn the_yaml_petstore_imports_to_the_same_surface() {
    let registry = ToolRegistry::new();
    let source = OpenApiSource::builder("petstore", OpenApiSpec::file(published("petstore.yaml")))
        .base_url("https://petstore.swagger.io/v2")
        .connect(&registry)
        .await
        .expect("the YAML Petstore imports");
    assert_eq!(source.skipped(), []);
    gonk_tools::assert_surface!(registry, "golden/openapi/petstore.json");
}

#[tokio::test]
async fn the_petstores_own_server_url_is_refused_as_plain_http_to_a_remote_host() {
    let error = OpenApiSource::builder("petstore", OpenApiSpec::file(published("petstore.json")))
        .connect(&ToolRegistry::new())
        .await
        .err()
        .expect("refused");
    assert!(error.to_string().contains("must use HTTPS"), "{error}");
}

#[tokio::test]
async fn each_recursive_request_body_of_a_published_document_is_refused_by_name() {
    // Each of its four operations has a recursive body: each refusal names
    // the first one (in path order) the route maps still keep.
    let paths = ["/direct", "/indirect", "/multiple", "/polymorphic"];
    for (i, path) in paths.iter().enumerate() {
        let registry = ToolRegistry::new();
        let mut builder = OpenApiSource::builder(
            "circ",
            OpenApiSpec::file(published("circular-request-bodies.json")),
        );
        for left_out in &paths[..i] {
            builder = builder.exclude(RouteMap::path(*left_out));
        }
        let error = builder
            .connect(&registry)
            .await
            .err()
            .expect("refused")
            .to_string();
        assert!(
            error.contains(&format!("POST {path}:")) && error.contains("recursive $ref"),
            "{path}: {error}"
        );
        assert!(registry.names().is_empty());
    }
}
