//! Helm chart rendering: a Go text/template front-end compiled onto minijinja, Sprig and Helm functions. Pure.
