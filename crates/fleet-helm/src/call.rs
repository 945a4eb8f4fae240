//! What a template function is, shared by the function table ([`crate::funcs`]) and the evaluator
//! ([`crate::template::exec`]) so that neither imports the other's internals: the signature every function has, the
//! part of the render a function may use (its call context) and how a function fails. It imports nothing but the
//! value model and the generator.

use crate::rng::Rng;
use crate::value::Value;

/// What a function may use of the render it runs in: the render's generator (random functions, keys,
/// certificates, salts). Functions that need the template set (`include`, `tpl`) are bound by the evaluator itself.
pub struct Call<'a> {
    pub rng: &'a mut Rng,
}

/// Why a function failed. The evaluator adds the template position and the failing expression.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FuncError {
    /// An ordinary error: reported as `error calling NAME: MESSAGE`.
    #[error("{0}")]
    Msg(String),
    /// `fail`/`required`: reported by Helm as `execution error at (LOCATION): MESSAGE`.
    #[error("{0}")]
    Fail(String),
}

impl FuncError {
    /// An ordinary error from a typed one: a Go function returns an `error`, which templates see only as text.
    pub fn msg(error: impl std::fmt::Display) -> Self {
        FuncError::Msg(error.to_string())
    }
}

pub type FuncResult = Result<Value, FuncError>;

/// A template function: the evaluated arguments, the piped value last.
pub type Func = fn(&mut Call<'_>, &[Value]) -> FuncResult;
