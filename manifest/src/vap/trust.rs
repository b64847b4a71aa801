//! The writers the settings trust by a user pattern (`trustedWriters[].users` with `*`), as a
//! match condition false exactly for their writes (`control_plane::trusts`): the webhook's
//! conditions skip only the patterns portable CEL can match without regular expressions, and
//! send the others to a policy that allows them; in the API server nothing comes after, so
//! the policy must skip them itself.

use single_owner_policy::Settings;
use single_owner_policy::control_plane::{parts, vouching_groups};

use super::claims::{escape, or};
use crate::conditions::{MatchCondition, quote, string_list};

/// The condition, when the settings trust writers by pattern; `Err` names a pattern whose `*`
/// stands where the groups that vouch for the name depend on it.
pub(super) fn condition(settings: &Settings) -> Result<Option<MatchCondition>, String> {
    let mut writes = Vec::new();
    for (index, writer) in settings.trusted_writers.iter().enumerate() {
        let resources = or(writer
            .resources
            .iter()
            .map(|resource| resource_is(resource)));
        let operations: Vec<String> = (writer.operations.iter())
            .map(|operation| format!("{operation:?}").to_uppercase())
            .collect();
        for (at, pattern) in writer.users.iter().enumerate() {
            if !pattern.contains('*') {
                continue;
            }
            let Some(groups) = vouching_groups(pattern) else {
                return Err(format!(
                    "trustedWriters[{index}].users[{at}]: {pattern:?} matches service accounts \
                     or nodes whose vouching groups depend on what `*` stands for; name each \
                     namespace"
                ));
            };
            let glob: Vec<String> = pattern.split('*').map(escape).collect();
            let user = format!(
                "has(request.userInfo.username) && request.userInfo.username.matches({})",
                quote(&format!("^(?s:{})$", glob.join(".*")))
            );
            let vouched = match groups.is_empty() {
                true => "true".to_owned(),
                false => format!(
                    "has(request.userInfo.groups) && {}.all(g, g in request.userInfo.groups)",
                    string_list(&groups)
                ),
            };
            writes.push(format!(
                "({user} && {vouched} && request.operation in {} && ({resources}))",
                string_list(&operations)
            ));
        }
    }
    Ok((!writes.is_empty()).then(|| MatchCondition {
        name: "not-a-trusted-pattern-write".to_owned(),
        expression: format!("!({})", writes.join(" || ")),
    }))
}

/// CEL: the request's resource is `resource` as a trust rule writes it.
fn resource_is(resource: &str) -> String {
    let Some((group, name, subresource)) = parts(resource) else {
        return "true".to_owned();
    };
    let sub = format!(
        "(has(request.subResource) ? request.subResource : '') == {}",
        quote(subresource)
    );
    match name {
        "*" => format!("({sub})"),
        name => format!(
            "(request.resource.group == {} && request.resource.resource == {} && {sub})",
            quote(group),
            quote(name)
        ),
    }
}
