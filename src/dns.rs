//! Kubernetes' DNS names, as its `IsDNS1123Label` and `IsDNS1123Subdomain` check them: the one
//! place that says what a namespace, a resource or a generated object name may be.

/// The longest DNS-1123 label.
pub const LABEL_MAX: usize = 63;

/// The longest DNS-1123 subdomain.
pub const SUBDOMAIN_MAX: usize = 253;

/// Whether `c` may stand in a DNS-1123 label: a lowercase alphanumeric or '-'.
pub fn is_label_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
}

/// Whether `text` is a DNS-1123 label: at most 63 characters matching
/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
pub fn is_dns_label(text: &str) -> bool {
    text.len() <= LABEL_MAX && is_label_text(text)
}

/// Whether `text` is a DNS-1123 subdomain: at most 253 characters, runs matching
/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` joined by '.'.
pub fn is_dns_subdomain(text: &str) -> bool {
    text.len() <= SUBDOMAIN_MAX && text.split('.').all(is_label_text)
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_label_text(text: &str) -> bool {
    let alphanumeric = |c: char| is_label_char(c) && c != '-';
    text.starts_with(alphanumeric)
        && text.ends_with(alphanumeric)
        && text.chars().all(is_label_char)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_subdomains_are_kubernetes_names() {
        for (text, label, subdomain) in [
            ("a", true, true),
            ("team-a", true, true),
            ("0ab9", true, true),
            ("", false, false),
            ("-a", false, false),
            ("a-", false, false),
            ("Team-a", false, false),
            ("a_b", false, false),
            ("a.b", false, true),
            ("a..b", false, false),
            (".a", false, false),
        ] {
            assert_eq!(is_dns_label(text), label, "{text:?}");
            assert_eq!(is_dns_subdomain(text), subdomain, "{text:?}");
        }
        let longest = "a".repeat(LABEL_MAX);
        assert!(is_dns_label(&longest));
        assert!(!is_dns_label(&format!("{longest}a")));
        assert!(is_dns_subdomain(&format!("{longest}a")));
        assert!(!is_dns_subdomain(&"a".repeat(SUBDOMAIN_MAX + 1)));
    }
}
