//! Sprig's integer and float arithmetic and conversions (`add`, `div`, `max`, `int`, `float64`, `atoi`, `floor`,
//! `addf`, …), with Sprig's `int64` results and Go's errors for division by zero.

use super::{Table, arity, at_least, err, str_arg, to_f64, to_i64};
use crate::value::Value;

pub(super) fn register(t: &mut Table) {
    t.insert("add", |_, a| {
        Ok(Value::from(
            a.iter().map(to_i64).fold(0i64, i64::wrapping_add),
        ))
    });
    t.insert("add1", |_, a| {
        arity("add1", a, 1)?;
        Ok(Value::from(to_i64(&a[0]).wrapping_add(1)))
    });
    t.insert("sub", |_, a| {
        arity("sub", a, 2)?;
        Ok(Value::from(to_i64(&a[0]).wrapping_sub(to_i64(&a[1]))))
    });
    t.insert("mul", |_, a| {
        at_least("mul", a, 1)?;
        Ok(Value::from(
            a.iter().map(to_i64).fold(1i64, i64::wrapping_mul),
        ))
    });
    t.insert("div", |_, a| {
        arity("div", a, 2)?;
        let d = to_i64(&a[1]);
        if d == 0 {
            return err("runtime error: integer divide by zero");
        }
        Ok(Value::from(to_i64(&a[0]).wrapping_div(d)))
    });
    t.insert("mod", |_, a| {
        arity("mod", a, 2)?;
        let d = to_i64(&a[1]);
        if d == 0 {
            return err("runtime error: integer divide by zero");
        }
        Ok(Value::from(to_i64(&a[0]).wrapping_rem(d)))
    });
    t.insert("max", |_, a| {
        at_least("max", a, 1)?;
        Ok(Value::from(a.iter().map(to_i64).max().unwrap_or(0)))
    });
    t.insert("biggest", |_, a| {
        at_least("biggest", a, 1)?;
        Ok(Value::from(a.iter().map(to_i64).max().unwrap_or(0)))
    });
    t.insert("min", |_, a| {
        at_least("min", a, 1)?;
        Ok(Value::from(a.iter().map(to_i64).min().unwrap_or(0)))
    });
    t.insert("addf", |_, a| {
        Ok(Value::from(a.iter().map(to_f64).sum::<f64>()))
    });
    t.insert("add1f", |_, a| {
        arity("add1f", a, 1)?;
        Ok(Value::from(to_f64(&a[0]) + 1.0))
    });
    t.insert("subf", |_, a| {
        at_least("subf", a, 1)?;
        Ok(Value::from(
            a[1..].iter().map(to_f64).fold(to_f64(&a[0]), |x, y| x - y),
        ))
    });
    t.insert("mulf", |_, a| {
        at_least("mulf", a, 1)?;
        Ok(Value::from(a.iter().map(to_f64).product::<f64>()))
    });
    t.insert("divf", |_, a| {
        at_least("divf", a, 1)?;
        Ok(Value::from(
            a[1..].iter().map(to_f64).fold(to_f64(&a[0]), |x, y| x / y),
        ))
    });
    t.insert("maxf", |_, a| {
        at_least("maxf", a, 1)?;
        Ok(Value::from(
            a.iter().map(to_f64).fold(f64::NEG_INFINITY, f64::max),
        ))
    });
    t.insert("minf", |_, a| {
        at_least("minf", a, 1)?;
        Ok(Value::from(
            a.iter().map(to_f64).fold(f64::INFINITY, f64::min),
        ))
    });
    t.insert("floor", |_, a| {
        arity("floor", a, 1)?;
        Ok(Value::from(to_f64(&a[0]).floor()))
    });
    t.insert("ceil", |_, a| {
        arity("ceil", a, 1)?;
        Ok(Value::from(to_f64(&a[0]).ceil()))
    });
    t.insert("round", |_, a| {
        at_least("round", a, 2)?;
        let places = to_i64(&a[1]).clamp(0, 15) as i32;
        let p = 10f64.powi(places);
        let x = to_f64(&a[0]) * p;
        let r = if x >= 0.0 {
            (x + 0.5).floor()
        } else {
            (x - 0.5).ceil()
        };
        Ok(Value::from(r / p))
    });
    t.insert("int", |_, a| {
        arity("int", a, 1)?;
        Ok(Value::from(to_i64(&a[0])))
    });
    t.insert("int64", |_, a| {
        arity("int64", a, 1)?;
        Ok(Value::from(to_i64(&a[0])))
    });
    t.insert("float64", |_, a| {
        arity("float64", a, 1)?;
        Ok(Value::from(to_f64(&a[0])))
    });
    t.insert("atoi", |_, a| {
        arity("atoi", a, 1)?;
        Ok(Value::from(str_arg(&a[0]).parse::<i64>().unwrap_or(0)))
    });
    t.insert("toDecimal", |_, a| {
        arity("toDecimal", a, 1)?;
        Ok(Value::from(
            i64::from_str_radix(&str_arg(&a[0]), 8).unwrap_or(0),
        ))
    });
}
