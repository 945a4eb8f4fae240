//! Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), which kubectl's
//! typed clients send for built-in kinds (`kubectl create deployment|job|role|secret|...`, `kubectl auth
//! can-i`, `kubectl create token`). Decodes the `k8s\0` envelope and then the object, field by field, with the
//! message table in [`schema`]; kinds outside that table (custom resources) are answered 415, as kube-apiserver
//! does. Responses are always JSON, which those clients accept.
//!
//! Go encodes every non-pointer field, so zero values arrive for fields its JSON form would omit: empty strings,
//! zero timestamps, and zero numbers and `false` are dropped here, as `omitempty` would, so that the object is
//! stored as a JSON create of it would be. Kept: scalars the schemas require (Go writes them at zero) and the
//! pointer fields of [`POINTER_SCALARS`], whose zero is a choice (`replicas: 0`).

mod schema;

use base64::Engine;
use chrono::DateTime;
use serde_json::{Map, Value, json};

use crate::error::{ApiError, ApiResult};
use schema::FieldKind;

const MAGIC: &[u8] = b"k8s\0";

/// Integer and boolean fields that are pointers in Go (`(Go type, field)`): present only when set, so a zero
/// that arrives was meant. Optional non-pointer scalars (`stdin`, `hostNetwork`, `minReadySeconds`) arrive
/// at zero whenever unset and are dropped.
const POINTER_SCALARS: &[(&str, &str)] = &[
    ("v1.DeploymentSpec", "replicas"),
    ("v1.DeploymentSpec", "revisionHistoryLimit"),
    ("v1.DeploymentSpec", "progressDeadlineSeconds"),
    ("v1.ReplicaSetSpec", "replicas"),
    ("v1.StatefulSetSpec", "replicas"),
    ("v1.StatefulSetSpec", "revisionHistoryLimit"),
    ("v1.DaemonSetSpec", "revisionHistoryLimit"),
    ("v1.JobSpec", "parallelism"),
    ("v1.JobSpec", "completions"),
    ("v1.JobSpec", "activeDeadlineSeconds"),
    ("v1.JobSpec", "backoffLimit"),
    ("v1.JobSpec", "ttlSecondsAfterFinished"),
    ("v1.JobSpec", "suspend"),
    ("v1.JobSpec", "manualSelector"),
    ("v1.CronJobSpec", "suspend"),
    ("v1.CronJobSpec", "startingDeadlineSeconds"),
    ("v1.CronJobSpec", "successfulJobsHistoryLimit"),
    ("v1.CronJobSpec", "failedJobsHistoryLimit"),
    ("v1.PodSpec", "terminationGracePeriodSeconds"),
    ("v1.PodSpec", "activeDeadlineSeconds"),
    ("v1.PodSpec", "automountServiceAccountToken"),
    ("v1.PodSpec", "shareProcessNamespace"),
    ("v1.PodSpec", "enableServiceLinks"),
    ("v1.PodSpec", "setHostnameAsFQDN"),
    ("v1.PodSpec", "hostUsers"),
    ("v1.PodSpec", "priority"),
    ("v1.ServiceAccount", "automountServiceAccountToken"),
    ("v1.Secret", "immutable"),
    ("v1.ConfigMap", "immutable"),
    ("v1.SecurityContext", "runAsUser"),
    ("v1.SecurityContext", "runAsGroup"),
    ("v1.SecurityContext", "runAsNonRoot"),
    ("v1.SecurityContext", "privileged"),
    ("v1.SecurityContext", "readOnlyRootFilesystem"),
    ("v1.SecurityContext", "allowPrivilegeEscalation"),
    ("v1.PodSecurityContext", "runAsUser"),
    ("v1.PodSecurityContext", "runAsGroup"),
    ("v1.PodSecurityContext", "runAsNonRoot"),
    ("v1.PodSecurityContext", "fsGroup"),
    ("v1.TokenRequestSpec", "expirationSeconds"),
    ("v2.HorizontalPodAutoscalerSpec", "minReplicas"),
    ("v1.ServiceSpec", "allocateLoadBalancerNodePorts"),
    ("v1.ServiceSpec", "publishNotReadyAddresses"),
    ("v1.ConfigMapVolumeSource", "defaultMode"),
    ("v1.SecretVolumeSource", "defaultMode"),
    ("v1.ConfigMapVolumeSource", "optional"),
    ("v1.SecretVolumeSource", "optional"),
    ("v1.ConfigMapKeySelector", "optional"),
    ("v1.SecretKeySelector", "optional"),
];

/// Whether a zero number or `false` in `field` of the message `message` is kept (see [`POINTER_SCALARS`]).
fn keeps_zero(message: &str, field: &str) -> bool {
    let mut segments = message.rsplit('.');
    let go_type = match (segments.next(), segments.next()) {
        (Some(kind), Some(version)) => format!("{version}.{kind}"),
        _ => return true,
    };
    POINTER_SCALARS.contains(&(go_type.as_str(), field))
        || crate::kinds::builtin_schema::is_required_scalar(&go_type, field)
}

fn malformed() -> ApiError {
    ApiError::bad_request("the protobuf request body is malformed")
}

/// Decodes a protobuf-encoded object into its JSON form.
pub fn decode(body: &[u8]) -> ApiResult<Value> {
    let envelope = body.strip_prefix(MAGIC).ok_or_else(malformed)?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for (number, value) in fields(envelope)? {
        match (number, value) {
            (1, Wire::Len(type_meta)) => {
                for (n, v) in fields(type_meta)? {
                    match (n, v) {
                        (1, Wire::Len(s)) => api_version = text(s)?,
                        (2, Wire::Len(s)) => kind = text(s)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Len(bytes)) => raw = bytes,
            _ => {}
        }
    }
    // Kubernetes registers the meta/v1 option kinds in every group version (metav1.AddToGroupVersion), so
    // client-go sends the DeleteOptions of a DELETE as `v1`/`apps/v1`/... `DeleteOptions`.
    let options =
        (kind == "DeleteOptions").then_some("apimachinery.pkg.apis.meta.v1.DeleteOptions");
    let name = options
        .or_else(|| schema::message_for(&api_version, &kind))
        .ok_or_else(|| {
            ApiError::unsupported_media_type(&format!(
                "application/vnd.kubernetes.protobuf (kind {kind:?})"
            ))
        })?;
    let mut object = match message(raw, name)? {
        Value::Object(object) => object,
        _ => return Err(malformed()),
    };
    object.insert("apiVersion".into(), json!(api_version));
    object.insert("kind".into(), json!(kind));
    Ok(Value::Object(object))
}

enum Wire<'a> {
    Varint(u64),
    Len(&'a [u8]),
    Fixed64(u64),
    Fixed32,
}

fn varint(buf: &[u8], pos: &mut usize) -> ApiResult<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*pos).ok_or_else(malformed)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(value);
        }
    }
    Err(malformed())
}

fn fields(buf: &[u8]) -> ApiResult<Vec<(u64, Wire<'_>)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < buf.len() {
        let key = varint(buf, &mut pos)?;
        let value = match key & 7 {
            0 => Wire::Varint(varint(buf, &mut pos)?),
            2 => {
                let len = usize::try_from(varint(buf, &mut pos)?).map_err(|_| malformed())?;
                let end = pos
                    .checked_add(len)
                    .filter(|end| *end <= buf.len())
                    .ok_or_else(malformed)?;
                let slice = &buf[pos..end];
                pos = end;
                Wire::Len(slice)
            }
            1 => {
                let bytes = buf.get(pos..pos + 8).ok_or_else(malformed)?;
                pos += 8;
                Wire::Fixed64(u64::from_le_bytes(
                    bytes.try_into().map_err(|_| malformed())?,
                ))
            }
            5 => {
                pos += 4;
                Wire::Fixed32
            }
            _ => return Err(malformed()),
        };
        if pos > buf.len() {
            return Err(malformed());
        }
        out.push((key >> 3, value));
    }
    Ok(out)
}

fn text(bytes: &[u8]) -> ApiResult<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| malformed())
}

fn base64(bytes: &[u8]) -> Value {
    json!(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A map entry (`1: key, 2: value`).
fn entry(bytes: &[u8]) -> ApiResult<(String, &[u8])> {
    let mut key = String::new();
    let mut value: &[u8] = &[];
    for (n, v) in fields(bytes)? {
        match (n, v) {
            (1, Wire::Len(k)) => key = text(k)?,
            (2, Wire::Len(b)) => value = b,
            _ => {}
        }
    }
    Ok((key, value))
}

/// Packed or single varints of a repeated integer field.
fn varints(wire: Wire<'_>) -> ApiResult<Vec<u64>> {
    match wire {
        Wire::Varint(v) => Ok(vec![v]),
        Wire::Len(bytes) => {
            let mut pos = 0;
            let mut out = Vec::new();
            while pos < bytes.len() {
                out.push(varint(bytes, &mut pos)?);
            }
            Ok(out)
        }
        _ => Err(malformed()),
    }
}

/// Decodes one message; [`Value::Null`] stands for a value Go's JSON form omits (a zero timestamp, an empty
/// raw object).
fn message(buf: &[u8], name: &'static str) -> ApiResult<Value> {
    if let Some(value) = well_known(buf, name)? {
        return Ok(value);
    }
    let defs = schema::message(name).ok_or_else(malformed)?;
    let mut out = Map::new();
    for (number, wire) in fields(buf)? {
        let Some(def) = defs.iter().find(|f| f.number == number) else {
            continue;
        };
        let key = def.name;
        let value = match (def.kind, wire) {
            (FieldKind::String, Wire::Len(b)) => match text(b)? {
                s if s.is_empty() => Value::Null,
                s => json!(s),
            },
            (FieldKind::Bytes, Wire::Len([])) => Value::Null,
            (FieldKind::Bytes, Wire::Len(b)) => base64(b),
            (FieldKind::Int32 | FieldKind::Int64 | FieldKind::Bool, Wire::Varint(0))
                if !keeps_zero(name, key) =>
            {
                Value::Null
            }
            (FieldKind::Int32, Wire::Varint(v)) => json!(v as i32),
            (FieldKind::Int64, Wire::Varint(v)) => json!(v as i64),
            (FieldKind::Bool, Wire::Varint(v)) => json!(v != 0),
            (FieldKind::Double, Wire::Fixed64(bits)) => json!(f64::from_bits(bits)),
            (FieldKind::Message(sub), Wire::Len(b)) => message(b, sub)?,
            (FieldKind::RepeatedString, Wire::Len(b)) => {
                push(&mut out, key, vec![json!(text(b)?)]);
                continue;
            }
            (FieldKind::RepeatedInt32, wire) => {
                let items = varints(wire)?.into_iter().map(|v| json!(v as i32));
                push(&mut out, key, items.collect());
                continue;
            }
            (FieldKind::RepeatedInt64, wire) => {
                let items = varints(wire)?.into_iter().map(|v| json!(v as i64));
                push(&mut out, key, items.collect());
                continue;
            }
            (FieldKind::RepeatedMessage(sub), Wire::Len(b)) => {
                push(&mut out, key, vec![message(b, sub)?]);
                continue;
            }
            (
                FieldKind::MapString | FieldKind::MapBytes | FieldKind::MapMessage(_),
                Wire::Len(b),
            ) => {
                let (k, v) = entry(b)?;
                let value = match def.kind {
                    FieldKind::MapString => json!(text(v)?),
                    FieldKind::MapBytes => base64(v),
                    FieldKind::MapMessage(sub) => message(v, sub)?,
                    _ => unreachable!("matched above"),
                };
                let map = out.entry(key).or_insert_with(|| json!({}));
                map[k] = value;
                continue;
            }
            _ => return Err(malformed()),
        };
        if value.is_null() {
            out.remove(key);
        } else {
            out.insert(key.to_string(), value);
        }
    }
    Ok(Value::Object(out))
}

fn push(out: &mut Map<String, Value>, key: &str, items: Vec<Value>) {
    if let Some(list) = out.entry(key).or_insert_with(|| json!([])).as_array_mut() {
        list.extend(items);
    }
}

/// Messages whose JSON form is not an object of their fields: times, durations, int-or-string, quantities,
/// embedded raw JSON and string lists.
fn well_known(buf: &[u8], name: &str) -> ApiResult<Option<Value>> {
    let short = name.rsplit('.').next().unwrap_or(name);
    let package = &name[..name.len() - short.len()];
    let value = match (package, short) {
        ("apimachinery.pkg.apis.meta.v1.", "Time" | "MicroTime") => {
            let (mut seconds, mut nanos) = (None, 0u32);
            for (n, v) in fields(buf)? {
                match (n, v) {
                    (1, Wire::Varint(s)) => seconds = Some(s as i64),
                    (2, Wire::Varint(ns)) => nanos = ns as u32,
                    _ => {}
                }
            }
            let time = seconds.and_then(|s| DateTime::from_timestamp(s, nanos));
            match time {
                Some(t) if short == "Time" => json!(t.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
                Some(t) => json!(t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()),
                None => Value::Null,
            }
        }
        ("apimachinery.pkg.apis.meta.v1.", "Duration") => {
            let mut nanos = 0i64;
            for (n, v) in fields(buf)? {
                if let (1, Wire::Varint(d)) = (n, v) {
                    nanos = d as i64;
                }
            }
            json!(go_duration(nanos))
        }
        ("apimachinery.pkg.util.intstr.", "IntOrString") => {
            let (mut is_string, mut int, mut string) = (false, 0i32, String::new());
            for (n, v) in fields(buf)? {
                match (n, v) {
                    (1, Wire::Varint(t)) => is_string = t == 1,
                    (2, Wire::Varint(i)) => int = i as i32,
                    (3, Wire::Len(s)) => string = text(s)?,
                    _ => {}
                }
            }
            if is_string { json!(string) } else { json!(int) }
        }
        ("apimachinery.pkg.api.resource.", "Quantity") => {
            let mut quantity = String::new();
            for (n, v) in fields(buf)? {
                if let (1, Wire::Len(s)) = (n, v) {
                    quantity = text(s)?;
                }
            }
            json!(quantity)
        }
        ("apimachinery.pkg.runtime.", "RawExtension")
        | ("apimachinery.pkg.apis.meta.v1.", "FieldsV1")
        | ("apiextensions_apiserver.pkg.apis.apiextensions.v1.", "JSON") => {
            let mut raw: &[u8] = &[];
            for (n, v) in fields(buf)? {
                if let (1, Wire::Len(b)) = (n, v) {
                    raw = b;
                }
            }
            if raw.is_empty() {
                Value::Null
            } else if raw.starts_with(MAGIC) {
                decode(raw)?
            } else {
                serde_json::from_slice(raw).map_err(|_| malformed())?
            }
        }
        (_, "ExtraValue") => {
            let mut items = Vec::new();
            for (n, v) in fields(buf)? {
                if let (1, Wire::Len(s)) = (n, v) {
                    items.push(json!(text(s)?));
                }
            }
            Value::Array(items)
        }
        _ => return Ok(None),
    };
    Ok(Some(value))
}

/// Go's `time.Duration.String()`: `1h2m3.5s`, `150ms`, `0s`.
fn go_duration(nanos: i64) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n == 0 {
        return "0s".into();
    }
    if n < 1_000_000_000 {
        let (unit, div) = match n {
            n if n < 1_000 => ("ns", 1),
            n if n < 1_000_000 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        return format!("{sign}{}{unit}", fraction(n, div));
    }
    let (hours, rest) = (n / 3_600_000_000_000, n % 3_600_000_000_000);
    let (minutes, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let seconds = fraction(rest, 1_000_000_000);
    match (hours, minutes) {
        (0, 0) => format!("{sign}{seconds}s"),
        (0, m) => format!("{sign}{m}m{seconds}s"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}s"),
    }
}

fn fraction(value: u64, unit: u64) -> String {
    let (whole, rest) = (value / unit, value % unit);
    if rest == 0 {
        return whole.to_string();
    }
    let digits = unit.to_string().len() - 1;
    let fraction = format!("{rest:0digits$}");
    format!("{whole}.{}", fraction.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(number: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![((number << 3) | 2) as u8, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn decodes_a_config_map_envelope() {
        let type_meta = [field(1, b"v1"), field(2, b"ConfigMap")].concat();
        let meta = [field(1, b"demo"), field(2, b"")].concat();
        let entry = [field(1, b"a"), field(2, b"1")].concat();
        let raw = [field(1, &meta), field(2, &entry)].concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        let value = decode(&body).unwrap();
        assert_eq!(
            value,
            json!({"metadata": {"name": "demo"}, "data": {"a": "1"}, "apiVersion": "v1", "kind": "ConfigMap"})
        );
    }

    #[test]
    fn decodes_delete_options_of_any_group_version() {
        let type_meta = [field(1, b"v1"), field(2, b"DeleteOptions")].concat();
        let raw = field(4, b"Background");
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        let value = decode(&body).unwrap();
        assert_eq!(value["propagationPolicy"], "Background");
        assert_eq!(value["kind"], "DeleteOptions");
    }

    #[test]
    fn rejects_truncated_and_unknown_kinds() {
        assert_eq!(decode(b"k8s\0\x0a\x05ab").unwrap_err().code, 400);
        let type_meta = [field(1, b"fleet.cattle.io/v1alpha1"), field(2, b"Bundle")].concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta)].concat();
        assert_eq!(decode(&body).unwrap_err().code, 415);
        assert_eq!(decode(b"nope").unwrap_err().code, 400);
    }
}
