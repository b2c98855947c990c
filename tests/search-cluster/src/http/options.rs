//! `IndicesOptions.fromRequest`: the `expand_wildcards`, `ignore_unavailable`,
//! `allow_no_indices` and `ignore_throttled` parameters, and the errors of an expression that
//! does not resolve.

use super::create::invalid_name;
use super::errors::ApiError;
use super::params::Params;
use crate::flavor::Product;
use crate::world::{IndicesOptions, Unresolved};

/// The parameters `IndicesOptions.fromRequest` consumes.
pub(crate) const INDICES_OPTIONS: [&str; 4] = [
    "expand_wildcards",
    "ignore_unavailable",
    "allow_no_indices",
    "ignore_throttled",
];

/// `WildcardStates.parseParameter`: a comma list of `open`, `closed`, `hidden` (ES 7.7+),
/// `none`, `all`; it replaces the endpoint's default states. Every index is open here, so
/// `closed` matches nothing.
fn expand_wildcards(
    value: &str,
    product: Product,
    options: &mut IndicesOptions,
) -> Result<(), ApiError> {
    options.expand_open = false;
    options.expand_hidden = false;
    for state in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match state {
            "open" => options.expand_open = true,
            "closed" => {}
            "hidden" if product.has_hidden() => options.expand_hidden = true,
            "none" => {
                options.expand_open = false;
                options.expand_hidden = false;
            }
            "all" => {
                options.expand_open = true;
                options.expand_hidden = product.has_hidden();
            }
            other => {
                return Err(ApiError::illegal_argument(format!(
                    "No valid expand wildcard value [{other}]"
                )));
            }
        }
    }
    Ok(())
}

/// The options of a request: the endpoint's defaults, overridden by whichever parameters it sent.
pub(crate) fn from_params(
    params: &Params,
    default: IndicesOptions,
    product: Product,
) -> Result<IndicesOptions, ApiError> {
    let mut options = default;
    if let Some(value) = params.get("expand_wildcards") {
        expand_wildcards(value, product, &mut options)?;
    }
    if params.get("ignore_unavailable").is_some() {
        options.ignore_unavailable = params.flag("ignore_unavailable")?;
    }
    if params.get("allow_no_indices").is_some() {
        options.allow_no_indices = params.flag("allow_no_indices")?;
    }
    // Frozen indices are not simulated: the flag is checked, then changes nothing.
    params.flag("ignore_throttled")?;
    Ok(options)
}

/// The error ES answers for an expression that does not resolve.
pub(crate) fn unresolved(error: Unresolved) -> ApiError {
    match error {
        Unresolved::Missing(name) => ApiError::index_not_found(&name),
        Unresolved::ExcludedDataStream { name, marked } => {
            ApiError::excluded_data_stream(&name, marked)
        }
        Unresolved::Nothing(expression) => ApiError::no_indices(&expression),
        Unresolved::Reserved(name) => invalid_name(&name, "must not start with '_'."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flavor::{Distribution, Flavor};

    fn parse(query: &str, flavor: Flavor) -> Result<IndicesOptions, ApiError> {
        from_params(
            &Params::parse(query),
            IndicesOptions::STRICT_EXPAND_OPEN,
            Product::new(flavor, Distribution::Oss),
        )
    }

    #[test]
    fn parameters_override_the_defaults() {
        let options = parse(
            "expand_wildcards=all&ignore_unavailable=true&allow_no_indices=false",
            Flavor::Es7,
        )
        .unwrap();
        assert!(options.expand_open && options.expand_hidden);
        assert!(options.ignore_unavailable && !options.allow_no_indices);
        assert_eq!(
            parse("", Flavor::Es7).unwrap(),
            IndicesOptions::STRICT_EXPAND_OPEN
        );
        let hidden_only = parse("expand_wildcards=hidden", Flavor::Os2).unwrap();
        assert!(!hidden_only.expand_open && hidden_only.expand_hidden);
    }

    #[test]
    fn es6_knows_no_hidden_state() {
        assert!(parse("expand_wildcards=hidden", Flavor::Es6).is_err());
        let all = parse("expand_wildcards=all", Flavor::Es6).unwrap();
        assert!(all.expand_open && !all.expand_hidden);
        assert!(parse("expand_wildcards=bogus", Flavor::Es8).is_err());
        assert!(parse("ignore_unavailable=maybe", Flavor::Es8).is_err());
    }
}
