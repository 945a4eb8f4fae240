//! The objects templates see besides `.Values`: `.Files` (a map of file contents with `Get`, `GetBytes`, `Glob`,
//! `Lines`, `AsConfig`, `AsSecrets`), `.Capabilities` (with `APIVersions.Has`), `.Chart` (Chart.yaml under Go
//! field names) and `.Release`.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::{Error, ErrorKind, State};

use super::file::FileData;
use super::load::{Chart, glob_match};
use crate::value::{Value, list_value, map_value};

/// `.Files`: the chart's non-template files.
#[derive(Debug, Clone, Default)]
pub struct Files(pub BTreeMap<String, FileData>);

impl Files {
    /// The contents of `name` (`None` when the chart has no such file); reading a deferred file can fail.
    fn contents(&self, name: &str) -> Result<Option<&[u8]>, Error> {
        self.0.get(name).map(read).transpose()
    }
}

/// A file's contents, or the template error of a file that could not be read.
fn read(file: &FileData) -> Result<&[u8], Error> {
    file.bytes()
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))
}

fn arg_str(args: &[Value], i: usize) -> String {
    args.get(i).map(crate::funcs::str_arg).unwrap_or_default()
}

fn base_name(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

impl Object for Files {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Map
    }
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        // An unreadable file reads as absent here (a lookup has no error to return); `Get` reports it.
        key.as_str()
            .and_then(|k| self.contents(k).ok().flatten())
            .map(|b| Value::from_bytes(b.to_vec()))
    }
    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.0.keys().map(|k| Value::from(k.as_str())).collect())
    }
    fn call_method(
        self: &Arc<Self>,
        _state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "Get" => Ok(Value::from(
                self.contents(&arg_str(args, 0))?
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default(),
            )),
            "GetBytes" => Ok(Value::from_bytes(
                self.contents(&arg_str(args, 0))?
                    .map(<[u8]>::to_vec)
                    .unwrap_or_default(),
            )),
            "Glob" => {
                let pat = arg_str(args, 0);
                let m = self
                    .0
                    .iter()
                    .filter(|(k, _)| glob_match(&pat, k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                Ok(Value::from_object(Files(m)))
            }
            "Lines" => {
                let Some(data) = self.contents(&arg_str(args, 0))? else {
                    return Ok(list_value(vec![]));
                };
                let s = String::from_utf8_lossy(data);
                let s = s.strip_suffix('\n').unwrap_or(&s);
                Ok(list_value(s.split('\n').map(Value::from).collect()))
            }
            "AsConfig" | "AsSecrets" => {
                if self.0.is_empty() {
                    return Ok(Value::from(""));
                }
                let m = self
                    .0
                    .iter()
                    .map(|(k, v)| {
                        let v = read(v)?;
                        let s = if method == "AsSecrets" {
                            base64::engine::general_purpose::STANDARD.encode(v)
                        } else {
                            String::from_utf8_lossy(v).into_owned()
                        };
                        Ok((base_name(k).to_string(), Value::from(s)))
                    })
                    .collect::<Result<BTreeMap<String, Value>, Error>>()?;
                let y = crate::yaml::to_yaml(&map_value(m))
                    .map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
                Ok(Value::from(y.trim_end_matches('\n').to_string()))
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}

/// `.Capabilities.APIVersions`: a list of group/versions with `Has`.
#[derive(Debug, Clone)]
pub struct ApiVersions(pub Vec<Cow<'static, str>>);

impl Object for ApiVersions {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }
    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        key.as_usize()
            .and_then(|i| self.0.get(i))
            .map(|s| Value::from(s.as_ref()))
    }
    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Seq(self.0.len())
    }
    fn call_method(
        self: &Arc<Self>,
        _state: &mut State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        match method {
            "Has" => {
                let wanted = arg_str(args, 0);
                Ok(Value::from(self.0.iter().any(|v| *v == wanted)))
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}

/// The API versions `helm template` v4.1 assumes without a cluster (client-go 1.35's scheme plus apiextensions).
pub const DEFAULT_API_VERSIONS: &[&str] = &[
    "v1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1",
    "internal.apiserver.k8s.io/v1alpha1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1alpha1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "autoscaling/v2beta1",
    "autoscaling/v2beta2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2",
    "coordination.k8s.io/v1beta1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1",
    "events.k8s.io/v1",
    "events.k8s.io/v1beta1",
    "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1",
    "flowcontrol.apiserver.k8s.io/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3",
    "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1",
    "node.k8s.io/v1",
    "node.k8s.io/v1alpha1",
    "node.k8s.io/v1beta1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1",
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3",
    "scheduling.k8s.io/v1alpha1",
    "scheduling.k8s.io/v1beta1",
    "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storagemigration.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1beta1",
    "apiextensions.k8s.io/v1",
];

fn s(v: &str) -> Value {
    Value::from(v)
}

/// `.Capabilities` for a Kubernetes version like `v1.33.0` and extra API versions.
pub fn capabilities(kube_version: &str, extra_api_versions: &[String]) -> Value {
    let v = if kube_version.starts_with('v') {
        kube_version.to_string()
    } else {
        format!("v{kube_version}")
    };
    let parsed = crate::funcs::parse_version(&v);
    let (major, minor) = parsed
        .map(|p| (p.major.to_string(), p.minor.to_string()))
        .unwrap_or_default();
    let mut kv = BTreeMap::new();
    kv.insert("Version".to_string(), s(&v));
    kv.insert("GitVersion".to_string(), s(&v));
    kv.insert("Major".to_string(), Value::from(major));
    kv.insert("Minor".to_string(), Value::from(minor));
    let mut hv = BTreeMap::new();
    hv.insert("Version".to_string(), s("v4.1.4"));
    hv.insert(
        "GitCommit".to_string(),
        s("05fa37973dc9e42b76e1d2883494c87174b6074f"),
    );
    hv.insert("GitTreeState".to_string(), s("clean"));
    hv.insert("GoVersion".to_string(), s("go1.25.9"));
    let mut apis: Vec<Cow<'static, str>> = DEFAULT_API_VERSIONS
        .iter()
        .map(|s| Cow::Borrowed(*s))
        .collect();
    apis.extend(extra_api_versions.iter().cloned().map(Cow::Owned));
    let mut caps = BTreeMap::new();
    caps.insert("KubeVersion".to_string(), map_value(kv));
    caps.insert("HelmVersion".to_string(), map_value(hv));
    caps.insert(
        "APIVersions".to_string(),
        Value::from_object(ApiVersions(apis)),
    );
    map_value(caps)
}

/// `.Release`.
pub fn release(name: &str, namespace: &str, is_upgrade: bool) -> Value {
    let mut m = BTreeMap::new();
    m.insert("Name".to_string(), s(name));
    m.insert("Namespace".to_string(), s(namespace));
    m.insert("IsInstall".to_string(), Value::from(!is_upgrade));
    m.insert("IsUpgrade".to_string(), Value::from(is_upgrade));
    m.insert("Revision".to_string(), Value::from(1));
    m.insert("Service".to_string(), s("Helm"));
    map_value(m)
}

fn json_str(m: &serde_json::Value, key: &str) -> Value {
    match m.get(key) {
        Some(serde_json::Value::String(s)) => Value::from(s.as_str()),
        Some(serde_json::Value::Null) | None => s(""),
        Some(other) => Value::from(other.to_string()),
    }
}

fn json_list(m: &serde_json::Value, key: &str, f: impl Fn(&serde_json::Value) -> Value) -> Value {
    match m.get(key) {
        Some(serde_json::Value::Array(items)) => list_value(items.iter().map(f).collect()),
        _ => list_value(vec![]),
    }
}

/// `.Chart`: Chart.yaml under Go's field names, plus `IsRoot`.
pub fn chart_object(chart: &Chart, is_root: bool) -> Value {
    let md = &chart.metadata;
    let mut m = BTreeMap::new();
    m.insert("Name".to_string(), Value::from(chart.name.as_str()));
    for (go, yaml) in [
        ("Home", "home"),
        ("Version", "version"),
        ("Description", "description"),
        ("Icon", "icon"),
        ("APIVersion", "apiVersion"),
        ("Condition", "condition"),
        ("Tags", "tags"),
        ("AppVersion", "appVersion"),
        ("KubeVersion", "kubeVersion"),
        ("Type", "type"),
    ] {
        m.insert(go.to_string(), json_str(md, yaml));
    }
    m.insert(
        "Deprecated".to_string(),
        Value::from(
            md.get("deprecated")
                .and_then(|d| d.as_bool())
                .unwrap_or(false),
        ),
    );
    m.insert("IsRoot".to_string(), Value::from(is_root));
    m.insert(
        "Sources".to_string(),
        json_list(md, "sources", crate::value::from_json),
    );
    m.insert(
        "Keywords".to_string(),
        json_list(md, "keywords", crate::value::from_json),
    );
    m.insert(
        "Maintainers".to_string(),
        json_list(md, "maintainers", |x| {
            let mut e = BTreeMap::new();
            e.insert("Name".to_string(), json_str(x, "name"));
            e.insert("Email".to_string(), json_str(x, "email"));
            e.insert("URL".to_string(), json_str(x, "url"));
            map_value(e)
        }),
    );
    let deps = chart
        .dependencies
        .iter()
        .map(|d| {
            let mut e = BTreeMap::new();
            e.insert("Name".to_string(), s(&d.name));
            e.insert("Version".to_string(), s(&d.version));
            e.insert("Repository".to_string(), s(&d.repository));
            e.insert("Condition".to_string(), s(&d.condition));
            e.insert(
                "Tags".to_string(),
                list_value(d.tags.iter().map(|t| s(t)).collect()),
            );
            e.insert("Enabled".to_string(), Value::from(true));
            e.insert(
                "ImportValues".to_string(),
                list_value(
                    d.import_values
                        .iter()
                        .map(crate::value::from_json)
                        .collect(),
                ),
            );
            e.insert("Alias".to_string(), s(&d.alias));
            map_value(e)
        })
        .collect();
    m.insert("Dependencies".to_string(), list_value(deps));
    m.insert(
        "Annotations".to_string(),
        match md.get("annotations") {
            Some(a @ serde_json::Value::Object(_)) => crate::value::from_json(a),
            _ => crate::value::nil(),
        },
    );
    map_value(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_hold_the_defaults_then_the_extra_ones() {
        let caps = capabilities("1.33.0", &["example.com/v1".to_string()]);
        let env = minijinja::Environment::new();
        let out = env
            .render_str(
                "{{ c.APIVersions.Has('example.com/v1') }} {{ c.APIVersions.Has('v1') }} \
                 {{ c.APIVersions.Has('nope/v1') }} {{ c.APIVersions|length }} {{ c.APIVersions[0] }} \
                 {{ c.APIVersions|last }} {{ c.KubeVersion.Minor }}",
                minijinja::context! { c => caps },
            )
            .unwrap();
        let n = DEFAULT_API_VERSIONS.len() + 1;
        assert_eq!(out, format!("True True False {n} v1 example.com/v1 33"));
    }
}
