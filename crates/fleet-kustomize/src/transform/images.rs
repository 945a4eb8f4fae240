//! `images`: rewriting container image names, tags and digests wherever containers are listed.

use serde_json::Value;

use crate::fieldspec::{TransformerConfig, visit};
use crate::kustomization::Image;
use crate::resource::Resource;

/// Splits an image reference into name, tag and digest (a registry port is part of the name).
pub fn split(image: &str) -> (&str, &str, &str) {
    let slash = image.find('/').unwrap_or(0);
    let search = &image[slash..];
    let at = search.find('@').map(|i| i + slash);
    let colon = search.find(':').map(|i| i + slash);
    match (colon, at) {
        (None, None) => (image, "", ""),
        (c, Some(a)) if c.is_none_or(|c| a < c) => (&image[..a], "", &image[a + 1..]),
        (Some(c), Some(a)) => (&image[..c], &image[c + 1..a], &image[a + 1..]),
        (Some(c), None) => (&image[..c], &image[c + 1..], ""),
        (None, Some(_)) => (image, "", ""),
    }
}

/// The new reference for `current` under `rule`, or `None` when the rule does not apply.
pub fn rewrite(current: &str, rule: &Image) -> Option<String> {
    let (name, tag, digest) = split(current);
    if name != rule.name {
        return None;
    }
    let name = if rule.new_name.is_empty() {
        name
    } else {
        rule.new_name.as_str()
    };
    let (tag, digest) = match (rule.new_tag.is_empty(), rule.digest.is_empty()) {
        (false, false) => (rule.new_tag.clone(), rule.digest.as_str()),
        (false, true) => (rule.new_tag.clone(), ""),
        (true, false) => (String::new(), rule.digest.as_str()),
        (true, true) => (tag.to_string(), digest),
    };
    let mut out = name.to_string();
    if !tag.is_empty() {
        out.push(':');
        out.push_str(&tag);
    }
    if !digest.is_empty() {
        out.push('@');
        out.push_str(digest);
    }
    Some(out)
}

fn set_image(v: &mut Value, rule: &Image) {
    if let Value::String(s) = v
        && let Some(new) = rewrite(s, rule)
    {
        *s = new;
    }
}

/// Updates `image` in every `containers`/`initContainers` list anywhere in the object.
fn walk_containers(v: &mut Value, rule: &Image) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                if (k == "containers" || k == "initContainers")
                    && let Value::Array(items) = child
                {
                    for c in items.iter_mut() {
                        if let Some(image) = c.get_mut("image") {
                            set_image(image, rule);
                        }
                    }
                }
                walk_containers(child, rule);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| walk_containers(i, rule)),
        _ => {}
    }
}

/// Applies one `images` rule to every resource.
pub fn apply(resources: &mut [Resource], rule: &Image, cfg: &TransformerConfig) {
    for r in resources.iter_mut() {
        walk_containers(&mut r.obj, rule);
        let gvk = r.gvk();
        for fs in cfg.images.iter().filter(|fs| fs.applies_to(&gvk)) {
            let _ = visit::<()>(&mut r.obj, &fs.path, false, &mut |v| {
                set_image(v, rule);
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(name: &str, new_name: &str, tag: &str, digest: &str) -> Image {
        Image {
            name: name.into(),
            new_name: new_name.into(),
            new_tag: tag.into(),
            digest: digest.into(),
            ..Default::default()
        }
    }

    #[test]
    fn split_handles_ports_tags_and_digests() {
        assert_eq!(split("nginx"), ("nginx", "", ""));
        assert_eq!(split("nginx:1.2"), ("nginx", "1.2", ""));
        assert_eq!(split("reg:5000/a/b:v1"), ("reg:5000/a/b", "v1", ""));
        assert_eq!(split("a@sha256:xy"), ("a", "", "sha256:xy"));
        assert_eq!(split("a:t@sha256:xy"), ("a", "t", "sha256:xy"));
    }

    #[test]
    fn rewrite_follows_kustomize() {
        assert_eq!(
            rewrite("nginx:1", &rule("nginx", "", "2", "")).as_deref(),
            Some("nginx:2")
        );
        assert_eq!(
            rewrite("nginx:1", &rule("nginx", "my/nginx", "", "")).as_deref(),
            Some("my/nginx:1")
        );
        assert_eq!(
            rewrite("nginx:1", &rule("nginx", "", "", "sha256:x")).as_deref(),
            Some("nginx@sha256:x")
        );
        assert_eq!(rewrite("nginxx:1", &rule("nginx", "", "2", "")), None);
    }
}
