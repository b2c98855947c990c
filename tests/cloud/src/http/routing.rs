//! Matching a path below an API's prefix to an endpoint, with the methods the endpoint allows.

use axum::http::Method;

/// Why a request matched no endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Miss {
    /// No such path.
    NotFound,
    /// The path exists with these methods only.
    Method(&'static [Method]),
}

/// The path's segments: `/resource_providers/x/` gives `["resource_providers", "x"]`.
pub(crate) fn segments(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|segment| !segment.is_empty())
        .collect()
}

/// Picks the endpoint if the method is one it allows.
pub(crate) fn select<E>(found: Option<(E, &'static [Method])>, method: &Method) -> Result<E, Miss> {
    match found {
        None => Err(Miss::NotFound),
        Some((endpoint, allowed)) if allowed.contains(method) => Ok(endpoint),
        Some((_, allowed)) => Err(Miss::Method(allowed)),
    }
}

/// The `Allow` header value for a method list.
pub(crate) fn allow(methods: &[Method]) -> String {
    let names: Vec<&str> = methods.iter().map(Method::as_str).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_by_method() {
        const GET: &[Method] = &[Method::GET];
        assert_eq!(select(Some((1, GET)), &Method::GET), Ok(1));
        assert_eq!(select(Some((1, GET)), &Method::PUT), Err(Miss::Method(GET)));
        assert_eq!(select::<u8>(None, &Method::GET), Err(Miss::NotFound));
        assert_eq!(segments("/a//b/"), ["a", "b"]);
        assert_eq!(allow(&[Method::GET, Method::POST]), "GET, POST");
    }
}
