//! The receive-pack protocol as a client speaks it: pkt-lines, the server's ref advertisement, the update
//! command followed by the pack, and the server's `report-status` answer.

/// A pkt-line with `payload`: four hex digits of length (including themselves), then the payload.
pub(crate) fn pkt_line(payload: &[u8]) -> Vec<u8> {
    let mut line = format!("{:04x}", payload.len() + 4).into_bytes();
    line.extend_from_slice(payload);
    line
}

/// The flush packet ending a section.
pub(crate) const FLUSH: &[u8] = b"0000";

/// One packet of a pkt-line stream.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Packet<'a> {
    Data(&'a [u8]),
    Flush,
}

/// Splits `input` into packets; `Err` names what is malformed.
pub(crate) fn packets(mut input: &[u8]) -> Result<Vec<Packet<'_>>, String> {
    let mut out = Vec::new();
    while !input.is_empty() {
        let head = input
            .get(..4)
            .ok_or_else(|| "truncated pkt-line length".to_string())?;
        let head =
            std::str::from_utf8(head).map_err(|_| "pkt-line length is not hex".to_string())?;
        let length =
            usize::from_str_radix(head, 16).map_err(|_| format!("bad pkt-line length {head:?}"))?;
        match length {
            // flush, delim and response-end packets carry nothing.
            0..=2 => {
                out.push(Packet::Flush);
                input = &input[4..];
            }
            3 => return Err("pkt-line length 3 is invalid".to_string()),
            _ => {
                let payload = input
                    .get(4..length)
                    .ok_or_else(|| "truncated pkt-line".to_string())?;
                out.push(Packet::Data(payload));
                input = &input[length..];
            }
        }
    }
    Ok(out)
}

/// The refs a receive-pack server advertises (name → id) and its capabilities.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Advertisement {
    pub refs: Vec<(String, String)>,
    pub capabilities: Vec<String>,
}

impl Advertisement {
    /// The id `name` points at, if the server has it.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.refs
            .iter()
            .find(|(ref_name, _)| ref_name == name)
            .map(|(_, id)| id.as_str())
    }
}

/// Parses a ref advertisement. Over smart HTTP it starts with `# service=git-receive-pack` and a flush; an
/// empty repository advertises `capabilities^{}` with the zero id.
pub(crate) fn parse_advertisement(body: &[u8]) -> Result<Advertisement, String> {
    let mut advertisement = Advertisement::default();
    let mut first = true;
    for packet in packets(body)? {
        let Packet::Data(line) = packet else { continue };
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches('\n');
        if line.starts_with("# service=") {
            continue;
        }
        let (reference, capabilities) = match line.split_once('\0') {
            Some((reference, capabilities)) => (reference, Some(capabilities)),
            None => (line, None),
        };
        if first && let Some(capabilities) = capabilities {
            advertisement.capabilities = capabilities
                .split(' ')
                .filter(|cap| !cap.is_empty())
                .map(str::to_string)
                .collect();
        }
        first = false;
        let (id, name) = reference
            .split_once(' ')
            .ok_or_else(|| format!("malformed ref advertisement line {reference:?}"))?;
        if name != "capabilities^{}" {
            advertisement.refs.push((name.to_string(), id.to_string()));
        }
    }
    Ok(advertisement)
}

/// The request body: one update command (asking for `report-status`), a flush, then the pack.
pub(crate) fn request(old: &str, new: &str, reference: &str, pack: &[u8]) -> Vec<u8> {
    let mut body =
        pkt_line(format!("{old} {new} {reference}\0report-status agent=fleet-rs\n").as_bytes());
    body.extend_from_slice(FLUSH);
    body.extend_from_slice(pack);
    body
}

/// What the server reported for the update of one ref.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Report {
    Ok,
    /// The pack was refused (`unpack <reason>`).
    UnpackFailed(String),
    /// The ref update was refused (`ng <ref> <reason>`).
    Rejected(String),
}

/// Reads a `report-status` answer for `reference`.
pub(crate) fn parse_report(body: &[u8], reference: &str) -> Result<Report, String> {
    let mut unpacked = false;
    for packet in packets(body)? {
        let Packet::Data(line) = packet else { continue };
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches('\n');
        if let Some(status) = line.strip_prefix("unpack ") {
            if status != "ok" {
                return Ok(Report::UnpackFailed(status.to_string()));
            }
            unpacked = true;
        } else if let Some(name) = line.strip_prefix("ok ") {
            if name == reference && unpacked {
                return Ok(Report::Ok);
            }
        } else if let Some(rest) = line.strip_prefix("ng ") {
            let (name, reason) = rest.split_once(' ').unwrap_or((rest, "rejected"));
            if name == reference {
                return Ok(Report::Rejected(reason.to_string()));
            }
        }
    }
    Err(format!(
        "the server's report names no outcome for {reference}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advertisement_over_http() {
        let mut body = pkt_line(b"# service=git-receive-pack\n");
        body.extend_from_slice(FLUSH);
        body.extend(pkt_line(
            format!(
                "{} refs/heads/main\0report-status delete-refs ofs-delta\n",
                "a".repeat(40)
            )
            .as_bytes(),
        ));
        body.extend(pkt_line(
            format!("{} refs/tags/v1\n", "b".repeat(40)).as_bytes(),
        ));
        body.extend_from_slice(FLUSH);
        let parsed = parse_advertisement(&body).unwrap();
        assert_eq!(parsed.get("refs/heads/main"), Some("a".repeat(40).as_str()));
        assert_eq!(parsed.get("refs/tags/v1"), Some("b".repeat(40).as_str()));
        assert_eq!(parsed.get("refs/heads/other"), None);
        assert!(parsed.capabilities.contains(&"report-status".to_string()));
    }

    #[test]
    fn empty_repository_advertises_no_refs() {
        let mut body =
            pkt_line(format!("{} capabilities^{{}}\0report-status\n", "0".repeat(40)).as_bytes());
        body.extend_from_slice(FLUSH);
        assert!(parse_advertisement(&body).unwrap().refs.is_empty());
    }

    #[test]
    fn reports() {
        let report = |lines: &[&str]| {
            let mut body = Vec::new();
            for line in lines {
                body.extend(pkt_line(line.as_bytes()));
            }
            body.extend_from_slice(FLUSH);
            parse_report(&body, "refs/heads/main")
        };
        assert_eq!(
            report(&["unpack ok\n", "ok refs/heads/main\n"]),
            Ok(Report::Ok)
        );
        assert_eq!(
            report(&["unpack ok\n", "ng refs/heads/main non-fast-forward\n"]),
            Ok(Report::Rejected("non-fast-forward".into()))
        );
        assert_eq!(
            report(&["unpack index-pack abnormal exit\n"]),
            Ok(Report::UnpackFailed("index-pack abnormal exit".into()))
        );
        assert!(report(&["unpack ok\n"]).is_err());
        assert!(packets(b"00").is_err());
    }
}
