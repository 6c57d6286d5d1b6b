//! What an image costs in tokens, by the providers' published rules.
//!
//! - OpenAI (GPT-4o family, vision docs): `detail: "low"` costs 85. Otherwise (`high`, `auto`
//!   or unset, priced as high to stay on the safe side) the image is scaled to fit in
//!   2048×2048, then scaled down so its shorter side is at most 768, and costs
//!   85 + 170 per 512-pixel tile.
//! - Claude (vision docs): an image whose long edge exceeds 1568 px is scaled down to it; the
//!   cost is width × height / 750, capped at [`CLAUDE_MAX_IMAGE_TOKENS`] (Anthropic resizes
//!   larger images to about 1.15 megapixels, ~1,600 tokens). Claude Opus 4.7 is priced by the
//!   same rule (an assumption: Anthropic documents higher resolutions for it, which would only
//!   make images dearer).
//! - Unknown dimensions (a URL, or base64 that is not PNG/GIF/JPEG): a fixed default, the cost
//!   of a 1024×1024 image for OpenAI ([`OPENAI_DEFAULT_IMAGE_TOKENS`]) and the cap for Claude.
//!
//! Guarantees: pure integer arithmetic, no panics, no overflow (dimensions are `u32`, products
//! are `u64`).

use super::family::ModelFamily;
use super::image_header::{sniff_base64_image_size, ImageSize};
use crate::model::ImageSource;

/// OpenAI's cost of an image at `detail: "low"`, and the base of every other image.
pub const OPENAI_BASE_IMAGE_TOKENS: u64 = 85;
/// OpenAI's cost per 512×512 tile at high detail.
pub const OPENAI_TILE_TOKENS: u64 = 170;
/// OpenAI estimate for an image of unknown size at high or auto detail (a 1024×1024 image:
/// scaled to 768×768, 4 tiles).
pub const OPENAI_DEFAULT_IMAGE_TOKENS: u64 = OPENAI_BASE_IMAGE_TOKENS + 4 * OPENAI_TILE_TOKENS;
/// Claude's longest image edge before it scales an image down.
pub const CLAUDE_MAX_EDGE: u64 = 1568;
/// The most a Claude image costs, and the estimate when its size is unknown.
pub const CLAUDE_MAX_IMAGE_TOKENS: u64 = 1600;

/// Estimated tokens of an image part, sniffing its size from base64 data when it can.
pub fn estimate_image(source: &ImageSource, detail: Option<&str>, family: ModelFamily) -> u64 {
    let size = match source {
        ImageSource::Base64 { data, .. } => sniff_base64_image_size(data),
        ImageSource::Url { .. } => None,
    };
    image_tokens(size, detail, family)
}

/// Tokens of an image of the given size (`None`: unknown) at OpenAI's `detail` (ignored by
/// the Claude families).
pub fn image_tokens(size: Option<ImageSize>, detail: Option<&str>, family: ModelFamily) -> u64 {
    match family {
        ModelFamily::OpenAi => {
            if detail.is_some_and(|detail| detail.eq_ignore_ascii_case("low")) {
                OPENAI_BASE_IMAGE_TOKENS
            } else {
                size.map_or(OPENAI_DEFAULT_IMAGE_TOKENS, openai_high_detail_tokens)
            }
        }
        ModelFamily::Claude | ModelFamily::Claude47 => {
            size.map_or(CLAUDE_MAX_IMAGE_TOKENS, claude_tokens)
        }
    }
}

fn openai_high_detail_tokens(size: ImageSize) -> u64 {
    let (width, height) = scale_to_fit(u64::from(size.width), u64::from(size.height), 2048);
    let shorter = width.min(height);
    let (width, height) = if shorter > 768 {
        (scale(width, 768, shorter), scale(height, 768, shorter))
    } else {
        (width, height)
    };
    let tiles = width.div_ceil(512).saturating_mul(height.div_ceil(512));
    OPENAI_BASE_IMAGE_TOKENS.saturating_add(OPENAI_TILE_TOKENS.saturating_mul(tiles))
}

fn claude_tokens(size: ImageSize) -> u64 {
    let (width, height) = scale_to_fit(
        u64::from(size.width),
        u64::from(size.height),
        CLAUDE_MAX_EDGE,
    );
    width
        .saturating_mul(height)
        .div_ceil(750)
        .clamp(1, CLAUDE_MAX_IMAGE_TOKENS)
}

/// Scales `(width, height)` down, keeping the aspect ratio, so the longer edge is at most
/// `max_edge`; never below one pixel.
fn scale_to_fit(width: u64, height: u64, max_edge: u64) -> (u64, u64) {
    let longer = width.max(height);
    if longer <= max_edge {
        (width, height)
    } else {
        (
            scale(width, max_edge, longer),
            scale(height, max_edge, longer),
        )
    }
}

fn scale(value: u64, numerator: u64, denominator: u64) -> u64 {
    value
        .saturating_mul(numerator)
        .checked_div(denominator)
        .unwrap_or(value)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(width: u32, height: u32) -> Option<ImageSize> {
        Some(ImageSize { width, height })
    }

    #[test]
    fn openai_follows_the_published_examples() {
        // OpenAI's docs: 1024×1024 high → 768×768, 4 tiles, 765 tokens; 2048×4096 → 1024×2048
        // → 768×1536, 6 tiles, 1105 tokens; low detail is always 85.
        assert_eq!(
            image_tokens(size(1024, 1024), Some("high"), ModelFamily::OpenAi),
            765
        );
        assert_eq!(
            image_tokens(size(2048, 4096), None, ModelFamily::OpenAi),
            1105
        );
        assert_eq!(
            image_tokens(size(4096, 4096), Some("low"), ModelFamily::OpenAi),
            85
        );
        assert_eq!(
            image_tokens(size(100, 100), Some("auto"), ModelFamily::OpenAi),
            255
        );
        assert_eq!(
            image_tokens(None, None, ModelFamily::OpenAi),
            OPENAI_DEFAULT_IMAGE_TOKENS
        );
    }

    #[test]
    fn claude_follows_the_published_examples() {
        // Anthropic's table: 200×200 ≈ 54 tokens, 1000×1000 ≈ 1334, 1092×1092 ≈ 1590.
        assert_eq!(image_tokens(size(200, 200), None, ModelFamily::Claude), 54);
        assert_eq!(
            image_tokens(size(1000, 1000), None, ModelFamily::Claude),
            1334
        );
        assert_eq!(
            image_tokens(size(1092, 1092), None, ModelFamily::Claude47),
            1590
        );
        assert_eq!(
            image_tokens(size(8000, 6000), None, ModelFamily::Claude),
            CLAUDE_MAX_IMAGE_TOKENS
        );
        assert_eq!(image_tokens(size(1, 1), None, ModelFamily::Claude), 1);
        assert_eq!(
            image_tokens(None, None, ModelFamily::Claude),
            CLAUDE_MAX_IMAGE_TOKENS
        );
    }

    #[test]
    fn extreme_sizes_do_not_overflow() {
        for family in ModelFamily::ALL {
            let huge = image_tokens(size(u32::MAX, u32::MAX), None, family);
            let thin = image_tokens(size(u32::MAX, 1), None, family);
            assert!(huge > 0 && thin > 0);
        }
    }
}
