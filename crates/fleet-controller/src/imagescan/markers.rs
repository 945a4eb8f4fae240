//! Rewriting the image scan markers in a repository's YAML files: a scalar whose line comment is
//! `{"$imagescan": "<setter>"}` gets the setter's value, where the setters of an ImageScan with tag name `t`
//! are `t` (`<canonical image>:<tag>`), `t:tag`, `t:name` (the canonical image) and `t:digest`
//! (`<canonical image>:<tag>@<digest>`), as Fleet's setters define them. Fleet re-emits each changed file
//! through kyaml; here only the marked values change and every other byte of the file stays as it was.
//! The value keeps its quoting (plain, `'…'` or `"…"`).

use std::collections::BTreeMap;

use fleet_api::ImageScan;

/// The marker key in a line comment.
pub const MARKER: &str = "$imagescan";

/// Setter name → value, for the scans that have found an image (the others set nothing).
pub fn setters(scans: &[ImageScan]) -> BTreeMap<String, String> {
    let mut setters = BTreeMap::new();
    for scan in scans {
        let Some(status) = &scan.status else { continue };
        if status.latest_image.is_empty() || scan.spec.tag_name.is_empty() {
            continue;
        }
        let image = &status.latest_image;
        let name = image
            .strip_suffix(&format!(":{}", status.latest_tag))
            .unwrap_or(image);
        let setter = &scan.spec.tag_name;
        setters.insert(setter.clone(), image.clone());
        setters.insert(format!("{setter}:tag"), status.latest_tag.clone());
        setters.insert(format!("{setter}:name"), name.to_string());
        setters.insert(
            format!("{setter}:digest"),
            format!("{image}@{}", status.latest_digest),
        );
    }
    setters
}

/// Whether a file is one the markers are looked for in (Fleet reads `*.yaml` and `*.yml`).
pub fn is_yaml(path: &str) -> bool {
    path.ends_with(".yaml") || path.ends_with(".yml")
}

/// `text` with its marked values set; `None` when nothing changes.
pub fn rewrite(text: &str, setters: &BTreeMap<String, String>) -> Option<String> {
    if !text.contains(MARKER) {
        return None;
    }
    let mut changed = false;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match rewrite_line(line, setters) {
            Some(new) => {
                changed |= new != line;
                out.push_str(&new);
            }
            None => out.push_str(line),
        }
    }
    changed.then_some(out)
}

/// The line with its marked value set, if it has a marker naming a known setter.
fn rewrite_line(line: &str, setters: &BTreeMap<String, String>) -> Option<String> {
    let comment_at = comment_start(line)?;
    let comment = line[comment_at + 1..].trim();
    let marker: serde_json::Map<String, serde_json::Value> = serde_json::from_str(comment).ok()?;
    let setter = marker.get(MARKER)?.as_str()?;
    let value = setters.get(setter)?;
    let before = &line[..comment_at];
    let content = before.trim_end();
    let start = value_start(content)?;
    let old = &content[start..];
    if old.is_empty() {
        return None;
    }
    let quoted = if old.len() >= 2 && old.starts_with('"') && old.ends_with('"') {
        format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
    } else if old.len() >= 2 && old.starts_with('\'') && old.ends_with('\'') {
        format!("'{}'", value.replace('\'', "''"))
    } else {
        value.clone()
    };
    Some(format!(
        "{}{quoted}{}{}",
        &content[..start],
        &before[content.len()..],
        &line[comment_at..]
    ))
}

/// Where the line comment starts: a `#` outside quotes, at the line's start or after whitespace.
fn comment_start(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if (c == '"' || c == '\'')
                && (previous.is_whitespace() || previous == ':' || previous == '-') =>
            {
                quote = Some(c);
            }
            None if c == '#' && previous.is_whitespace() => return Some(at),
            None => {}
        }
        previous = c;
    }
    None
}

/// Where the scalar value of `content` (a line without its comment) starts: after list item dashes and after
/// the first `key: ` outside quotes.
fn value_start(content: &str) -> Option<usize> {
    let mut at = content.len() - content.trim_start().len();
    while content[at..].starts_with("- ") {
        at += 2;
        at += content[at..].len() - content[at..].trim_start().len();
    }
    let rest = &content[at..];
    if rest.starts_with('"') || rest.starts_with('\'') {
        // A quoted scalar (a list item) or a quoted key: find its end, then a `: ` after it.
        let quote = rest.chars().next()?;
        let end = rest[1..].find(quote)? + 2;
        return match rest[end..].strip_prefix(": ") {
            Some(value) => Some(content.len() - value.trim_start().len()),
            None => Some(at),
        };
    }
    match rest.find(": ") {
        Some(colon) => {
            let value = &rest[colon + 2..];
            Some(content.len() - value.trim_start().len())
        }
        None => Some(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleet_api::{ImageScanSpec, ImageScanStatus};

    fn scan(tag_name: &str, image: &str, tag: &str, digest: &str) -> ImageScan {
        let mut scan = ImageScan::new(
            "s",
            ImageScanSpec {
                tag_name: tag_name.into(),
                ..Default::default()
            },
        );
        scan.status = Some(ImageScanStatus {
            latest_image: format!("{image}:{tag}"),
            latest_tag: tag.into(),
            latest_digest: digest.into(),
            ..Default::default()
        });
        scan
    }

    fn setters_for_app() -> BTreeMap<String, String> {
        setters(&[
            scan("app", "127.0.0.1:5000/team/app", "1.2.0", "sha256:abc"),
            // Not scanned yet: sets nothing.
            ImageScan::new(
                "t",
                ImageScanSpec {
                    tag_name: "other".into(),
                    ..Default::default()
                },
            ),
        ])
    }

    #[test]
    fn every_setter_form() {
        let text = "\
spec:
  containers:
  - name: app
    image: 127.0.0.1:5000/team/app:1.0.0 # {\"$imagescan\": \"app\"}
  - image: \"old\"   # {\"$imagescan\": \"app:digest\"}
  env:
  - {name: X, value: y}
  - name: TAG
    value: '1.0.0' #{\"$imagescan\":\"app:tag\"}
  - name: NAME
    value: x # {\"$imagescan\": \"app:name\"}
  - name: OTHER
    value: keep # {\"$imagescan\": \"other\"}
  args:
  - old-item # {\"$imagescan\": \"app:tag\"}
  note: \"a # not a comment\" # plain comment
";
        let expected = "\
spec:
  containers:
  - name: app
    image: 127.0.0.1:5000/team/app:1.2.0 # {\"$imagescan\": \"app\"}
  - image: \"127.0.0.1:5000/team/app:1.2.0@sha256:abc\"   # {\"$imagescan\": \"app:digest\"}
  env:
  - {name: X, value: y}
  - name: TAG
    value: '1.2.0' #{\"$imagescan\":\"app:tag\"}
  - name: NAME
    value: 127.0.0.1:5000/team/app # {\"$imagescan\": \"app:name\"}
  - name: OTHER
    value: keep # {\"$imagescan\": \"other\"}
  args:
  - 1.2.0 # {\"$imagescan\": \"app:tag\"}
  note: \"a # not a comment\" # plain comment
";
        assert_eq!(rewrite(text, &setters_for_app()).unwrap(), expected);
        // Already current: nothing to write.
        assert_eq!(rewrite(expected, &setters_for_app()), None);
    }

    #[test]
    fn files_without_markers_are_left_alone() {
        assert_eq!(
            rewrite("image: nginx # a comment\n", &setters_for_app()),
            None
        );
        assert_eq!(
            rewrite(
                "image: nginx # {\"$imagescan\": \"unknown\"}\n",
                &setters_for_app()
            ),
            None
        );
        assert!(is_yaml("a/b.yml") && is_yaml("c.yaml") && !is_yaml("fleet.json"));
    }
}
