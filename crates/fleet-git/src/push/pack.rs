//! Pack files for pushing: version 2, every object stored whole (no deltas), zlib-compressed, with the SHA-1
//! trailer `git index-pack` checks. A push carries a handful of new objects, so deltas would save little.

use std::io::Write;

use flate2::Compression;
use flate2::write::ZlibEncoder;

/// One object to pack: its kind and its uncompressed content.
pub(crate) struct PackObject {
    pub kind: gix::objs::Kind,
    pub data: Vec<u8>,
}

/// The pack holding `objects`.
pub(crate) fn write_pack(objects: &[PackObject]) -> std::io::Result<Vec<u8>> {
    let mut pack = Vec::new();
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    let count = u32::try_from(objects.len())
        .map_err(|_| std::io::Error::other("too many objects for one pack"))?;
    pack.extend_from_slice(&count.to_be_bytes());
    for object in objects {
        write_header(&mut pack, type_code(object.kind), object.data.len() as u64);
        let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
        encoder.write_all(&object.data)?;
        pack.extend_from_slice(&encoder.finish()?);
    }
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(&pack);
    let digest = hasher
        .try_finalize()
        .map_err(|err| std::io::Error::other(err.to_string()))?;
    pack.extend_from_slice(digest.as_bytes());
    Ok(pack)
}

/// The pack format's object type numbers.
fn type_code(kind: gix::objs::Kind) -> u8 {
    match kind {
        gix::objs::Kind::Commit => 1,
        gix::objs::Kind::Tree => 2,
        gix::objs::Kind::Blob => 3,
        gix::objs::Kind::Tag => 4,
    }
}

/// An object's header: type in bits 4-6 of the first byte, size in its low 4 bits and then 7 bits per byte,
/// least significant first, the high bit set on every byte but the last.
fn write_header(out: &mut Vec<u8>, type_code: u8, size: u64) {
    let mut byte = (type_code << 4) | (size & 0x0f) as u8;
    let mut rest = size >> 4;
    while rest != 0 {
        out.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    out.push(byte);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_sizes_continue_in_seven_bit_groups() {
        let mut out = Vec::new();
        write_header(&mut out, 3, 10);
        assert_eq!(out, [0x3a]);
        out.clear();
        // 300 = 0b1_0010_1100: low nibble 0xc, then 300 >> 4 = 18.
        write_header(&mut out, 1, 300);
        assert_eq!(out, [0x80 | 0x10 | 0x0c, 18]);
    }
}
