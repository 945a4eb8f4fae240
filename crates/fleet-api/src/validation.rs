//! Schema validation rules that Fleet's CRDs declare beyond plain types.

use serde_json::{Value, json};

/// CEL rule of Fleet's duration fields (`pollingInterval`, `imageScanInterval`, token `ttl`):
/// `"0"` or a Go duration in ns/us/µs/ms/s/m/h of at most 2562047h.
pub(crate) fn go_duration_rules() -> Value {
    json!([{
        "rule": "self == '0' || (self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') && duration(self) <= duration('2562047h'))",
        "message": "must be a valid Go duration using units ns, us, µs, ms, s, m, h (e.g. 15s, 5m, 2h, 1h30m); units like d (days) or w (weeks) are not supported",
    }])
}
