//! Setting status conditions the way wrangler does: `lastTransitionTime` changes only when the status
//! changes, `lastUpdateTime` only when anything changes, and the list keeps a stable order.

use fleet_api::Condition;

use crate::index::summary::ready_message;

/// Sets condition `type_` in `conditions` to `status` with `reason` and `message` at time `now` (RFC 3339).
pub fn set(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: &str,
) {
    let status = if status { "True" } else { "False" };
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(existing) => {
            if existing.status == status && existing.reason == reason && existing.message == message
            {
                return;
            }
            if existing.status != status {
                existing.last_transition_time = now.to_string();
            }
            existing.status = status.to_string();
            existing.reason = reason.to_string();
            existing.message = message.to_string();
            existing.last_update_time = now.to_string();
        }
        None => conditions.push(Condition {
            type_: type_.to_string(),
            status: status.to_string(),
            last_update_time: now.to_string(),
            last_transition_time: now.to_string(),
            reason: reason.to_string(),
            message: message.to_string(),
        }),
    }
}

/// Now, as conditions record it.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The `Ready` condition Fleet derives from a summary: true when nothing is non-ready, else false with
/// [`ready_message`] naming the non-ready `kind`s.
pub fn set_ready(
    conditions: &mut Vec<fleet_api::Condition>,
    summary: &fleet_api::BundleSummary,
    kind: &str,
    now: &str,
) {
    let message = ready_message(summary, kind);
    set(conditions, "Ready", message.is_empty(), "", &message, now);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_moves_only_on_status_change() {
        let mut list = Vec::new();
        set(&mut list, "Ready", true, "", "", "t1");
        set(&mut list, "Ready", true, "", "", "t2");
        assert_eq!(list[0].last_update_time, "t1");
        set(&mut list, "Ready", true, "", "still", "t3");
        assert_eq!(
            (
                list[0].last_transition_time.as_str(),
                list[0].last_update_time.as_str()
            ),
            ("t1", "t3")
        );
        set(&mut list, "Ready", false, "Failed", "x", "t4");
        assert_eq!(list[0].last_transition_time, "t4");
        set(&mut list, "Accepted", true, "", "", "t5");
        assert_eq!(
            list.iter().map(|c| c.type_.as_str()).collect::<Vec<_>>(),
            ["Ready", "Accepted"]
        );
    }
}
