//! Bad input gets kube-apiserver's Status answers (400, 404, 405, 413, 415, 422), never a panic or a 500.

use axum::body::Body;
use fleet_apiserver::ApiServer;
use http::{Method, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;

async fn call(
    server: &ApiServer,
    method: Method,
    uri: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (StatusCode, Value) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(Body::from(body))
        .unwrap();
    let resp = server.router().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn malformed_bodies_are_400_with_a_status() {
    let server = ApiServer::in_memory();
    for (content_type, body) in [
        ("application/json", &b"{\"metadata\": "[..]),
        ("application/json", b"[1,2]"),
        ("application/json", b""),
        ("application/yaml", b"metadata: [unclosed"),
        ("application/json", b"\xff\xfe"),
    ] {
        let (status, body) = call(&server, Method::POST, CMS, content_type, body.to_vec()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{content_type} {body}");
        assert_eq!(body["kind"], "Status");
        assert_eq!(body["reason"], "BadRequest");
        assert!(!body["message"].as_str().unwrap().is_empty());
    }
    let (status, body) = call(
        &server,
        Method::POST,
        CMS,
        "application/vnd.kubernetes.protobuf",
        b"k8s\0".to_vec(),
    )
    .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Some("UnsupportedMediaType")
        )
    );
}

#[tokio::test]
async fn limits_and_routing_errors() {
    let server = ApiServer::in_memory();
    let huge = format!(
        "{{\"metadata\":{{\"name\":\"big\"}},\"data\":{{\"x\":\"{}\"}}}}",
        "a".repeat(3 * 1024 * 1024 + 1)
    );
    let (status, body) = call(
        &server,
        Method::POST,
        CMS,
        "application/json",
        huge.into_bytes(),
    )
    .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("RequestEntityTooLarge"))
    );

    let (status, body) = call(
        &server,
        Method::GET,
        "/api/v1/nosuchthings",
        "application/json",
        vec![],
    )
    .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::NOT_FOUND, Some("NotFound"))
    );
    let (status, _) = call(
        &server,
        Method::PUT,
        CMS,
        "application/json",
        b"{}".to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    for query in [
        "labelSelector=a%20in%20b",
        "watch=true&resourceVersion=abc",
        "limit=2&continue=garbage",
    ] {
        let (status, _) = call(&server, Method::GET, &format!("{CMS}?{query}"), "", vec![]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
    }

    let (status, _) = call(
        &server,
        Method::POST,
        CMS,
        "application/json",
        br#"{"metadata":{"name":"p"}}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = call(
        &server,
        Method::PATCH,
        &format!("{CMS}/p"),
        "application/json-patch+json",
        br#"[{"op":"remove","path":"/nope"}]"#.to_vec(),
    )
    .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("Invalid"))
    );
    let (status, _) = call(
        &server,
        Method::PATCH,
        &format!("{CMS}/p"),
        "text/plain",
        b"x".to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let (status, _) = call(
        &server,
        Method::PATCH,
        &format!("{CMS}/p"),
        "application/apply-patch+yaml",
        b"data: {}".to_vec(),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "apply without fieldManager"
    );
}

#[tokio::test]
async fn random_bytes_never_cause_a_server_error() {
    let server = ApiServer::in_memory();
    let (status, _) = call(
        &server,
        Method::POST,
        CMS,
        "application/json",
        br#"{"metadata":{"name":"target"}}"#.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let fragments: [&[u8]; 8] = [
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"metadata\":",
        b"\"op\":\"add\"",
        b"- a: ",
        b"\n",
    ];
    let content_types = [
        "application/json",
        "application/yaml",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    ];
    for i in 0..400 {
        let len = (next() % 40) as usize;
        let body: Vec<u8> = (0..len)
            .flat_map(|_| {
                let r = next();
                if r % 3 == 0 {
                    vec![(r >> 8) as u8]
                } else {
                    fragments[(r % 8) as usize].to_vec()
                }
            })
            .collect();
        let ct = if i % 7 == 0 {
            "application/vnd.kubernetes.protobuf"
        } else {
            content_types[i % content_types.len()]
        };
        let body = if ct.contains("protobuf") {
            [b"k8s\0".to_vec(), body].concat()
        } else {
            body
        };
        let (method, uri) = match i % 6 {
            0 => (Method::POST, CMS.to_string()),
            1 => (Method::PATCH, format!("{CMS}/target?fieldManager=fuzz")),
            2 => (Method::PUT, format!("{CMS}/target")),
            3 => (
                Method::POST,
                "/api/v1/namespaces/default/serviceaccounts/default/token".to_string(),
            ),
            4 => (
                Method::POST,
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews".to_string(),
            ),
            _ => (Method::DELETE, format!("{CMS}/target?dryRun=All")),
        };
        let (status, body) = call(&server, method, &uri, ct, body).await;
        assert!(status.as_u16() < 500, "{status} for {ct}: {body}");
    }
}

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn deployment(name: &str, spec_extra: &str) -> Vec<u8> {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"{name}"}},
        "spec":{{{spec_extra}"selector":{{"matchLabels":{{"app":"x"}}}},
        "template":{{"metadata":{{"labels":{{"app":"x"}}}},"spec":{{"containers":[{{"name":"c","image":"i"}}]}}}}}}}}"#
    )
    .into_bytes()
}

#[tokio::test]
async fn built_in_kinds_get_go_decoding_errors_and_field_validation() {
    let server = ApiServer::in_memory();
    let json = "application/json";
    let (status, body) = call(
        &server,
        Method::POST,
        DEPLOYMENTS,
        json,
        deployment("a", r#""replicas":"abc","#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
    let bad_image = deployment("a", "")
        .iter()
        .map(|b| *b as char)
        .collect::<String>()
        .replace(r#""image":"i""#, r#""image":5"#);
    let (status, body) = call(
        &server,
        Method::POST,
        DEPLOYMENTS,
        json,
        bad_image.into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string"
    );

    // Unknown fields: refused under Strict, dropped otherwise.
    let unknown = deployment("b", r#""replicaz":2,"#);
    let strict = format!("{DEPLOYMENTS}?fieldValidation=Strict");
    let (status, body) = call(&server, Method::POST, &strict, json, unknown.clone()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replicaz\""
    );
    for mode in ["Warn", "Ignore"] {
        let uri = format!("{DEPLOYMENTS}?fieldValidation={mode}");
        let body = String::from_utf8(unknown.clone())
            .unwrap()
            .replace("\"b\"", &format!("\"{}\"", mode.to_lowercase()));
        let (status, body) = call(&server, Method::POST, &uri, json, body.into_bytes()).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert!(body["spec"].get("replicaz").is_none(), "{body}");
        assert_eq!(
            body["spec"]["template"]["spec"]["containers"][0]["image"],
            "i"
        );
    }

    // Values of open types (int-or-string, quantities, embedded objects) keep their freedom.
    let ok = deployment(
        "c",
        r#""strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}},"replicas":null,"#,
    );
    let (status, body) = call(&server, Method::POST, &strict, json, ok).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn openapi_serves_the_real_built_in_schemas() {
    let server = ApiServer::in_memory();
    let (status, doc) = call(&server, Method::GET, "/openapi/v3/apis/apps/v1", "", vec![]).await;
    assert_eq!(status, StatusCode::OK);
    let schemas = &doc["components"]["schemas"];
    let deployment = &schemas["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"][0]["kind"],
        "Deployment"
    );
    assert_eq!(
        schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]["format"],
        "int32"
    );
    assert!(schemas["io.k8s.api.core.v1.Container"]["properties"]["image"].is_object());
}
