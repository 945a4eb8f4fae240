//! `IntOrString` values such as `maxUnavailable: 2` or `"25%"`, and the two ways they are
//! scaled against a count: Fleet's `limit` (rounding down, at least 1) and Kubernetes'
//! `GetScaledValueFromIntOrPercent` with rounding up (used by KubeFleet's rollout budget).

pub use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::error::TargetError;

/// An integer or a string (a percentage such as `"25%"`, or a number written as a string): the
/// `IntOrString` of fleet-api's types.
pub type IntOrPercent = IntOrString;

/// Scaling an [`IntOrString`] against a count.
pub trait IntOrPercentExt {
    /// `"<p>%"`.
    fn percent(p: u32) -> Self;
    /// Fleet's `limit(count, value)` for one resolved value: `count ≤ 0` gives 1; an integer is
    /// used as is; a numeric string is used when positive; a percentage gives
    /// `floor(count·p/100)` with a minimum of 1 (also when `p ≤ 0`).
    fn fleet_limit(&self, count: usize, field: &str) -> Result<i64, TargetError>;
    /// Kubernetes' scaled value with rounding up: an integer as is, `p%` as `ceil(p·total/100)`.
    fn scaled_round_up(&self, total: usize, field: &str) -> Result<i64, TargetError>;
}

impl IntOrPercentExt for IntOrString {
    fn percent(p: u32) -> Self {
        IntOrString::String(format!("{p}%"))
    }

    fn fleet_limit(&self, count: usize, field: &str) -> Result<i64, TargetError> {
        if count == 0 {
            return Ok(1);
        }
        match self {
            IntOrString::Int(i) => Ok(i64::from(*i)),
            IntOrString::String(s) => {
                if let Ok(i) = s.parse::<i64>()
                    && i > 0
                {
                    return Ok(i);
                }
                let percent = parse_percent(s, field)?;
                if percent <= 0.0 {
                    return Ok(1);
                }
                let scaled = ((count as f64) * percent) as i64 / 100;
                Ok(scaled.max(1))
            }
        }
    }

    fn scaled_round_up(&self, total: usize, field: &str) -> Result<i64, TargetError> {
        match self {
            IntOrString::Int(i) => Ok(i64::from(*i)),
            IntOrString::String(s) => {
                if let Ok(i) = s.parse::<i64>() {
                    return Ok(i);
                }
                let percent = parse_percent(s, field)?;
                Ok((percent * total as f64 / 100.0).ceil() as i64)
            }
        }
    }
}

fn parse_percent(s: &str, field: &str) -> Result<f64, TargetError> {
    s.strip_suffix('%')
        .and_then(|p| p.trim().parse::<f64>().ok())
        .filter(|p| p.is_finite())
        .ok_or_else(|| {
            TargetError::invalid(
                field,
                format!("{s:?} is neither an integer nor a percentage such as \"25%\""),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_limit_table() {
        let s = |v: &str| IntOrPercent::String(v.into());
        let cases: &[(usize, IntOrPercent, i64)] = &[
            (0, s("50%"), 1),
            (10, IntOrPercent::Int(3), 3),
            (10, IntOrPercent::Int(0), 0),
            (10, s("3"), 3),
            (10, s("50%"), 5),
            (10, s("25%"), 2),
            (3, s("25%"), 1),
            (10, s("0%"), 1),
            (10, s("-5%"), 1),
            (230, s("25%"), 57),
            (100, s("100%"), 100),
            (7, s("33.3%"), 2),
        ];
        for (count, v, want) in cases {
            assert_eq!(v.fleet_limit(*count, "f").unwrap(), *want, "{count} {v:?}");
        }
        let err = s("abc").fleet_limit(10, "rolloutStrategy.maxUnavailable");
        assert_eq!(
            err.unwrap_err().to_string(),
            "rolloutStrategy.maxUnavailable: \"abc\" is neither an integer nor a percentage such as \"25%\""
        );
    }

    #[test]
    fn scaled_round_up_table() {
        let s = |v: &str| IntOrPercent::String(v.into());
        assert_eq!(s("25%").scaled_round_up(8, "f").unwrap(), 2);
        assert_eq!(s("25%").scaled_round_up(7, "f").unwrap(), 2);
        assert_eq!(s("25%").scaled_round_up(1, "f").unwrap(), 1);
        assert_eq!(s("0%").scaled_round_up(7, "f").unwrap(), 0);
        assert_eq!(IntOrPercent::Int(3).scaled_round_up(7, "f").unwrap(), 3);
    }
}
