//! Image dimensions read from the first bytes of a PNG, GIF or JPEG, without decoding it.
//!
//! Images reach the estimator as base64 text; their token cost depends on width and height.
//! This module decodes a bounded prefix of the base64 ([`SNIFF_PREFIX_BYTES`] bytes of image)
//! and reads the dimensions from the header: PNG's IHDR chunk, GIF's logical screen, JPEG's
//! first start-of-frame segment (after any EXIF or colour-profile segments that fit in the
//! prefix).
//!
//! Guarantees: pure, bounded work on any input (at most the prefix is decoded and scanned),
//! never panics on garbage, truncated headers or invalid base64: it returns `None` instead.

/// How many image bytes are decoded from base64 at most. JPEG's start-of-frame usually sits in
/// the first few kilobytes, after EXIF data that can reach 64 KB with a thumbnail.
pub const SNIFF_PREFIX_BYTES: usize = 96 * 1024;

/// Width and height in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ImageSize {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// The dimensions of a PNG, GIF or JPEG given as base64 (standard or URL-safe alphabet; line
/// breaks and a `data:...;base64,` prefix are tolerated). `None` when the format is not one of
/// those or the header is not in the decoded prefix.
pub fn sniff_base64_image_size(data: &str) -> Option<ImageSize> {
    let payload = match data.strip_prefix("data:") {
        Some(rest) => rest.split_once(',').map_or("", |(_, payload)| payload),
        None => data,
    };
    sniff_image_size(&decode_base64_prefix(payload, SNIFF_PREFIX_BYTES))
}

/// The dimensions of a PNG, GIF or JPEG from its first bytes.
pub fn sniff_image_size(bytes: &[u8]) -> Option<ImageSize> {
    png_size(bytes)
        .or_else(|| gif_size(bytes))
        .or_else(|| jpeg_size(bytes))
}

fn png_size(bytes: &[u8]) -> Option<ImageSize> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if !bytes.starts_with(SIGNATURE) || bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    non_zero(read_u32_be(bytes, 16)?, read_u32_be(bytes, 20)?)
}

fn gif_size(bytes: &[u8]) -> Option<ImageSize> {
    if !bytes.starts_with(b"GIF87a") && !bytes.starts_with(b"GIF89a") {
        return None;
    }
    let width = u16::from_le_bytes([*bytes.get(6)?, *bytes.get(7)?]);
    let height = u16::from_le_bytes([*bytes.get(8)?, *bytes.get(9)?]);
    non_zero(u32::from(width), u32::from(height))
}

fn jpeg_size(bytes: &[u8]) -> Option<ImageSize> {
    if !bytes.starts_with(&[0xff, 0xd8]) {
        return None;
    }
    let mut at = 2usize;
    loop {
        // Markers may be padded with any number of 0xFF fill bytes.
        if *bytes.get(at)? != 0xff {
            return None;
        }
        while *bytes.get(at)? == 0xff {
            at = at.checked_add(1)?;
        }
        let marker = *bytes.get(at)?;
        at = at.checked_add(1)?;
        match marker {
            // Markers without a length: restart markers, TEM, start of image.
            0xd0..=0xd8 | 0x01 => continue,
            // End of image or start of scan before any frame header: no size to find.
            0xd9 | 0xda => return None,
            _ => {}
        }
        let length = usize::from(read_u16_be(bytes, at)?);
        let is_start_of_frame =
            matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc);
        if is_start_of_frame {
            // length(2) precision(1) height(2) width(2)
            let height = read_u16_be(bytes, at.checked_add(3)?)?;
            let width = read_u16_be(bytes, at.checked_add(5)?)?;
            return non_zero(u32::from(width), u32::from(height));
        }
        if length < 2 {
            return None;
        }
        at = at.checked_add(length)?;
    }
}

fn non_zero(width: u32, height: u32) -> Option<ImageSize> {
    (width > 0 && height > 0).then_some(ImageSize { width, height })
}

fn read_u32_be(bytes: &[u8], at: usize) -> Option<u32> {
    let slice = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([
        *slice.first()?,
        *slice.get(1)?,
        *slice.get(2)?,
        *slice.get(3)?,
    ]))
}

fn read_u16_be(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([
        *bytes.get(at)?,
        *bytes.get(at.checked_add(1)?)?,
    ]))
}

/// Decodes base64 until `limit` bytes are out, an invalid character or padding is met, or the
/// text ends. Whitespace is skipped.
fn decode_base64_prefix(text: &str, limit: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(limit.min(text.len() / 4 * 3 + 3));
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in text.bytes() {
        if out.len() >= limit {
            break;
        }
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => break,
        };
        buffer = (buffer << 6 | u32::from(value)) & 0x00ff_ffff;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((buffer >> bits) & 0xff) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // A 1x1 PNG, a 3x2 GIF and a JPEG header with an APP0 segment before a 640x480 frame,
    // each as base64.
    const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    const GIF_3X2: &str = "R0lGODlhAwACAIAAAP///wAAACwAAAAAAwACAAACAoRRADs=";

    fn jpeg_640x480() -> Vec<u8> {
        let mut bytes = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10];
        bytes.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
        bytes.extend_from_slice(&[
            0xff, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80, 0x03,
        ]);
        bytes
    }

    #[test]
    fn reads_png_gif_and_jpeg_headers() {
        assert_eq!(
            sniff_base64_image_size(PNG_1X1),
            Some(ImageSize {
                width: 1,
                height: 1
            })
        );
        assert_eq!(
            sniff_base64_image_size(GIF_3X2),
            Some(ImageSize {
                width: 3,
                height: 2
            })
        );
        assert_eq!(
            sniff_image_size(&jpeg_640x480()),
            Some(ImageSize {
                width: 640,
                height: 480
            })
        );
        let data_url = format!("data:image/png;base64,{PNG_1X1}");
        assert_eq!(
            sniff_base64_image_size(&data_url),
            Some(ImageSize {
                width: 1,
                height: 1
            })
        );
    }

    // The widely used smallest JPEG: JFIF and a quantization table before a progressive
    // (SOF2) 1×1 frame.
    const JPEG_1X1: &str = "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=";
    // The classic transparent 1×1 GIF.
    const GIF_1X1: &str = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

    #[test]
    fn reads_real_minimal_files() {
        let one = Some(ImageSize {
            width: 1,
            height: 1,
        });
        assert_eq!(sniff_base64_image_size(JPEG_1X1), one);
        assert_eq!(sniff_base64_image_size(GIF_1X1), one);
    }

    #[test]
    fn jpeg_frame_after_big_segments_is_found_within_the_prefix_only() {
        // An APP1 (EXIF-like) segment of 60 KB before the frame: inside the prefix.
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe1, 0xea, 0x60];
        jpeg.resize(jpeg.len() + 0xea60 - 2, 0);
        let frame = [0xff, 0xc0, 0x00, 0x11, 0x08, 0x04, 0x38, 0x07, 0x80, 0x03];
        jpeg.extend_from_slice(&frame);
        let size = Some(ImageSize {
            width: 1920,
            height: 1080,
        });
        assert_eq!(sniff_image_size(&jpeg), size);
        // Segments that push the frame past the prefix: no size rather than unbounded work.
        let mut far = vec![0xff, 0xd8];
        for _ in 0..2 {
            far.extend_from_slice(&[0xff, 0xe1, 0xff, 0xff]);
            far.resize(far.len() + 0xffff - 2, 0);
        }
        far.extend_from_slice(&frame);
        assert_eq!(sniff_image_size(&far), size);
        let truncated = &far[..SNIFF_PREFIX_BYTES.min(far.len())];
        assert_eq!(sniff_image_size(truncated), None);
    }

    #[test]
    fn base64_decoding_matches_known_values() {
        assert_eq!(decode_base64_prefix("aGVsbG8=", 100), b"hello");
        assert_eq!(decode_base64_prefix("aGVs\nbG8", 100), b"hello");
        assert_eq!(decode_base64_prefix("aGVsbG8", 2), b"he");
    }

    #[test]
    fn garbage_and_truncation_give_none() {
        assert_eq!(sniff_base64_image_size(""), None);
        assert_eq!(sniff_base64_image_size("!!!!"), None);
        assert_eq!(sniff_base64_image_size("data:image/png"), None);
        assert_eq!(sniff_image_size(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0"), None);
        assert_eq!(sniff_image_size(b"GIF89a\x01"), None);
        let jpeg = jpeg_640x480();
        // The width ends one byte before the end (the component count is not needed).
        for cut in 0..jpeg.len() - 1 {
            assert_eq!(sniff_image_size(&jpeg[..cut]), None, "cut at {cut}");
        }
        assert_eq!(
            sniff_image_size(&[0xff, 0xd8, 0xff, 0xe0, 0x00, 0x00]),
            None
        );
        assert_eq!(sniff_image_size(&[0xff, 0xd8, 0xff, 0xda]), None);
        assert_eq!(sniff_image_size(&[0xff; 64]), None);
    }
}
