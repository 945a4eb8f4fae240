//! Patch algorithms: JSON patch (RFC 6902), merge patch (RFC 7386) and strategic merge patch. (Owner: yaml-patch helper.)
