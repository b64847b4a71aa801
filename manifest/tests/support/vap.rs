//! Evaluating the generated ValidatingAdmissionPolicy with cel-rust as the API server does
//! (`k8s.io/apiserver`'s validating admission policy): the match conditions first (all true, or
//! the request is not judged), then the `variables` in order, each visible to the later ones as
//! `variables.<name>`, then every validation; a validation that is false denies with its
//! message. The API server evaluates variables lazily and these helpers eagerly, so an error in
//! any variable is an error here where the API server might never meet it: stricter.
//!
//! And what the module says of the same request, in the same terms: the rule each violation
//! names, with its mark and its template (a list of templates by the list's path).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use cel::objects::{Key, Map};
use std::rc::Rc;

use cel::{Context, Env, Program};
use serde_json::Value;
use single_owner_manifest::ResourceRule;
use single_owner_manifest::vap::stamp::Stamping;
use single_owner_manifest::vap::{Rules, Split, Vap};
use single_owner_policy::policy::{Payload, Verdict};
use single_owner_policy::{NoHost, Settings};

use super::{Conditions, program, variables_in};

thread_local! {
    /// The functions the API server gives policies that the generated ones use beyond portable
    /// CEL: Kubernetes' strings extension (`split`, `replace`).
    static STRINGS: Arc<Env> = {
        let mut env = Env::stdlib();
        env.add_extension(cel::extensions::strings).expect("the strings extension");
        Arc::new(env)
    };
}

/// A rule broken: its mark as messages name it, the template (by its place, or the path of a
/// list of them), and the rule's name.
pub type Broken = (String, Option<String>, String);

/// What a policy does with a request, compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Allowed,
    Denied(BTreeSet<Broken>),
    /// Allowed with warnings: an exempt requester's bypass of these rules.
    Exempt(BTreeSet<Broken>),
    /// Left to the webhook deployed beside the policy (the split's condition holds); whether
    /// the webhook's own conditions send it to policy-server.
    Webhook(bool),
    /// The module cannot read the request: one the API server never sends.
    Unreadable,
}

/// A compiled policy.
pub struct Compiled {
    vap: Vap,
    /// The match conditions of the policy that denies, and of its twin that warns.
    denying: Conditions,
    warning: Option<Conditions>,
    /// The split's condition, and the webhook's own conditions.
    webhook: Option<(Rc<Program>, Conditions)>,
    variables: Vec<(String, Rc<Program>)>,
    validations: Vec<Rc<Program>>,
}

impl Compiled {
    pub fn of(settings: &Settings) -> Compiled {
        let vap = single_owner_manifest::vap::vap(settings, Split::WithWebhook)
            .expect("the settings fit a VAP");
        let compile = |name: &str, expression: &str| {
            program(expression).unwrap_or_else(|error| panic!("{name}: {error}"))
        };
        Compiled {
            denying: Conditions::compile(&vap.denying_conditions()),
            warning: (vap.warning_conditions()).map(|conditions| Conditions::compile(&conditions)),
            webhook: (vap.webhook.as_ref()).map(|webhook| {
                let own = Conditions::compile(&vap.match_conditions);
                (compile("the split", webhook), own)
            }),
            variables: (vap.variables.iter())
                .map(|v| (v.name.clone(), compile(&v.name, &v.expression)))
                .collect(),
            validations: (vap.validations.iter())
                .map(|v| compile(&v.mark, &v.expression))
                .collect(),
            vap,
        }
    }

    /// Whether the policy's `matchConstraints` take `request`.
    pub fn constrains(&self, request: &Value) -> bool {
        matched(&self.vap.resource_rules, request)
    }

    /// What the policy and its twin in the API server do with `request`: both hold the same
    /// variables and validations, and their match conditions decide which judges it.
    pub fn outcome(&self, request: &Value) -> Result<Outcome, String> {
        let mut context = variables_in(Context::with_env(STRINGS.with(Arc::clone)), request);
        // The webhook's requests: the split's, which its own conditions send.
        if let Some((split, own)) = &self.webhook {
            match split.execute(&context) {
                Ok(cel::Value::Bool(true)) => return Ok(Outcome::Webhook(own.evaluate(&context)?)),
                Ok(cel::Value::Bool(false)) => {}
                other => return Err(format!("the split: {other:?}")),
            }
        }
        let denies = self.denying.evaluate(&context)?;
        let warns = match &self.warning {
            Some(warning) => warning.evaluate(&context)?,
            None => false,
        };
        if !denies && !warns {
            return Ok(Outcome::Allowed);
        }
        let values = evaluate(&self.variables, &mut context)?;
        let mut broken = BTreeSet::new();
        for (program, validation) in self.validations.iter().zip(&self.vap.validations) {
            match program.execute(&context) {
                Ok(cel::Value::Bool(true)) => continue,
                Ok(cel::Value::Bool(false)) => {}
                other => return Err(format!("{}: {other:?}", validation.mark)),
            }
            let rules = match &validation.rules {
                Rules::Offer => vec!["offer".to_owned()],
                Rules::In(name) | Rules::Each(name) => {
                    match (
                        &validation.rules,
                        values.get(&Key::String(Arc::new(name.clone()))),
                    ) {
                        (Rules::In(_), Some(cel::Value::String(rule))) => vec![rule.to_string()],
                        (Rules::Each(_), Some(cel::Value::List(items))) => broken_in(items),
                        (_, other) => return Err(format!("{name}: not its rules: {other:?}")),
                    }
                }
            };
            for rule in rules {
                broken.insert((validation.mark.clone(), validation.template.clone(), rule));
            }
        }
        if broken.is_empty() {
            return Ok(Outcome::Allowed);
        }
        Ok(match denies {
            true => Outcome::Denied(broken),
            false => Outcome::Exempt(broken),
        })
    }
}

impl Compiled {
    /// What the policy's failed validations say of `request`, with the variables evaluated as
    /// for [`Compiled::outcome`].
    pub fn messages(&self, request: &Value) -> Vec<String> {
        let mut context = variables_in(Context::with_env(STRINGS.with(Arc::clone)), request);
        evaluate(&self.variables, &mut context).unwrap();
        let mut messages = Vec::new();
        for (program, validation) in self.validations.iter().zip(&self.vap.validations) {
            if program.execute(&context) == Ok(cel::Value::Bool(true)) {
                continue;
            }
            let message = program_of(&validation.message_expression).execute(&context);
            match message {
                Ok(cel::Value::String(message)) => messages.push(message.to_string()),
                other => panic!("{}: {other:?}", validation.mark),
            }
        }
        messages
    }
}

impl Compiled {
    /// What the exemptions twin says of `request`, an exempt requester's, without
    /// exemptions nothing.
    pub fn bypass(&self, request: &Value) -> Option<Bypass> {
        let who = &self.vap.exemption.as_ref()?.who;
        let mut context = variables_in(Context::with_env(STRINGS.with(Arc::clone)), request);
        let values = evaluate(&self.variables, &mut context).unwrap();
        let string = |expression: &str, what: &str| match program_of(expression).execute(&context) {
            Ok(cel::Value::String(text)) => text.to_string(),
            other => panic!("{what}: {other:?}"),
        };
        let rule = |name: &str| values.get(&Key::String(Arc::new(name.to_owned()))).cloned();
        let who = string(who, "who");
        let (mut warnings, mut broken) = (Vec::new(), String::new());
        for (program, validation) in self.validations.iter().zip(&self.vap.validations) {
            if program.execute(&context) == Ok(cel::Value::Bool(true)) {
                continue;
            }
            let message = self.vap.bypass_message(validation).unwrap();
            warnings.push(string(&message, &validation.mark));
            // What it broke: its rule, a list of templates' first, the offer's fault.
            let rule = match &validation.rules {
                Rules::Offer => format!("offer: {}", text(&rule("offer"))),
                Rules::In(name) => text(&rule(name)),
                Rules::Each(name) => match rule(name) {
                    Some(cel::Value::List(items)) => (broken_in(&items).into_iter().next())
                        .unwrap_or_else(|| panic!("{name}: a failed list without a rule")),
                    other => panic!("{name}: {other:?}"),
                },
            };
            let key = match &validation.template {
                Some(place) => format!("{} in {place}", validation.mark),
                None => validation.mark.clone(),
            };
            broken.push_str(&format!("{key}: {rule}; "));
        }
        let annotation = string(&self.vap.exemption_annotation().unwrap(), "the annotation");
        Some(Bypass {
            annotation_broke: format!("{who}{broken}"),
            who,
            warnings,
            annotation,
        })
    }
}

/// What the exemptions twin says of an exempt requester's request.
#[derive(Debug)]
pub struct Bypass {
    /// Who bypassed (`exempt user break-glass bypassed: `).
    pub who: String,
    /// Each failed validation's warning.
    pub warnings: Vec<String>,
    /// The audit annotation's value.
    pub annotation: String,
    /// What it should be: who, then what each failed validation broke, as its variables say.
    pub annotation_broke: String,
}

/// The rules a list of templates' items break, in order: each item's `[rule, line]` whose rule
/// is not `''` ([`Rules::Each`]).
fn broken_in(items: &[cel::Value]) -> Vec<String> {
    (items.iter())
        .filter_map(|item| match item {
            cel::Value::List(pair) => match pair.first() {
                Some(cel::Value::String(rule)) if !rule.is_empty() => Some(rule.to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// A CEL string's text, `""` for anything else.
fn text(value: &Option<cel::Value>) -> String {
    match value {
        Some(cel::Value::String(text)) => text.to_string(),
        _ => String::new(),
    }
}

/// What the module says of `request`, an exempt requester's: its warnings, and its audit
/// annotation's value.
pub fn module_bypass(request: &Value, settings: &Value) -> (Vec<String>, Option<String>) {
    let payload = serde_json::json!({"request": request, "settings": settings});
    let response = Payload::parse(&serde_json::to_vec(&payload).unwrap())
        .unwrap()
        .verdict(&NoHost)
        .response();
    let annotation = (response.audit_annotations.unwrap_or_default())
        .remove(single_owner_policy::policy::EXEMPTION_ANNOTATION);
    (response.warnings.unwrap_or_default(), annotation)
}

/// A compiled MutatingAdmissionPolicy that stamps.
pub struct CompiledStamping {
    stamping: Stamping,
    conditions: Conditions,
    variables: Vec<(String, Rc<Program>)>,
}

impl CompiledStamping {
    pub fn of(settings: &Settings) -> CompiledStamping {
        let stamping = single_owner_manifest::vap::stamp::stamping(settings)
            .expect("the settings fit a MutatingAdmissionPolicy")
            .expect("the settings stamp");
        CompiledStamping {
            conditions: Conditions::compile(&stamping.match_conditions),
            variables: (stamping.variables.iter())
                .map(|v| (v.name.clone(), program_of(&v.expression)))
                .collect(),
            stamping,
        }
    }

    /// The object as the policy patches it — its `stampLabels` and `stampAnnotations` added,
    /// the offer removed where `consumeOffer` — or `None` where it changes nothing: what its
    /// JSON patch, built from those variables, does.
    pub fn patched(&self, request: &Value, offer: &str) -> Result<Option<Value>, String> {
        if !matched(&self.stamping.resource_rules, request) {
            return Ok(None);
        }
        let mut context = variables_in(Context::with_env(STRINGS.with(Arc::clone)), request);
        if !self.conditions.evaluate(&context)? {
            return Ok(None);
        }
        let values = evaluate(&self.variables, &mut context)?;
        let get = |name: &str| values.get(&Key::String(Arc::new(name.to_owned())));
        let mut object = request["object"].clone();
        let mut changed = false;
        for (field, name) in [
            ("labels", "stampLabels"),
            ("annotations", "stampAnnotations"),
        ] {
            let Some(cel::Value::Map(added)) = get(name) else {
                return Err(format!("{name}: {:?}", get(name)));
            };
            for (key, value) in added.map.iter() {
                let (Key::String(key), cel::Value::String(value)) = (key, value) else {
                    return Err(format!("{name}: {key:?}: {value:?}"));
                };
                let metadata = &mut object["metadata"];
                if !metadata[field].is_object() {
                    metadata[field] = serde_json::json!({});
                }
                metadata[field][key.as_str()] = Value::from(value.as_str());
                changed = true;
            }
        }
        if get("consumeOffer") == Some(&cel::Value::Bool(true)) {
            object["metadata"]["annotations"]
                .as_object_mut()
                .ok_or("consumeOffer without annotations")?
                .remove(offer);
            changed = true;
        }
        Ok(changed.then_some(object))
    }
}

/// The object as the module's stamping twin (`stampOnly: true`) admits `request`: `None` where
/// it changes nothing; `Err` where it cannot read it.
pub fn module_patched(request: &Value, settings: &Value) -> Result<Option<Value>, ()> {
    let mut settings = settings.clone();
    settings["stampOnly"] = Value::from(true);
    let payload = serde_json::json!({"request": request, "settings": settings});
    let raw = serde_json::to_vec(&payload).unwrap();
    let parsed = Payload::parse(&raw).map_err(|_| ())?;
    match parsed.verdict(&NoHost) {
        Verdict::Mutate(object) => Ok(Some(object)),
        Verdict::Unreadable(_) => Err(()),
        _ => Ok(None),
    }
}

/// What the module's denial says of `request`, a line a violation.
pub fn module_lines(request: &Value, settings: &Value) -> Vec<String> {
    let payload = serde_json::json!({"request": request, "settings": settings});
    let raw = serde_json::to_vec(&payload).unwrap();
    let parsed = Payload::parse(&raw).unwrap();
    match parsed.verdict(&NoHost) {
        Verdict::Deny(violations) => violations.iter().map(ToString::to_string).collect(),
        _ => Vec::new(),
    }
}

fn program_of(expression: &str) -> Rc<Program> {
    program(expression).unwrap_or_else(|error| panic!("{error}"))
}

/// Evaluates `variables` in order, each visible to the later ones as `variables.<name>`, as
/// the API server does (eagerly: an error in any is an error here), and leaves them all in
/// `context`.
fn evaluate(
    variables: &[(String, Rc<Program>)],
    context: &mut Context<'static, 'static>,
) -> Result<HashMap<Key, cel::Value>, String> {
    let mut values: HashMap<Key, cel::Value> = HashMap::new();
    for (name, program) in variables {
        context.add_variable_from_value("variables", map(&values));
        let value = program
            .execute(context)
            .map_err(|error| format!("variable {name}: {error:?}"))?;
        values.insert(Key::String(Arc::new(name.clone())), value);
    }
    context.add_variable_from_value("variables", map(&values));
    Ok(values)
}

fn map(values: &HashMap<Key, cel::Value>) -> cel::Value {
    cel::Value::Map(Map {
        map: Arc::new(values.clone()),
    })
}

/// What the module does with `request` under `settings` (JSON), with no host.
pub fn module_outcome(request: &Value, settings: &Value) -> Outcome {
    let payload = serde_json::json!({"request": request, "settings": settings});
    let raw = serde_json::to_vec(&payload).unwrap();
    let Ok(parsed) = Payload::parse(&raw) else {
        return Outcome::Unreadable;
    };
    let broken = |violations: &[single_owner_policy::Violation]| {
        (violations.iter())
            .map(|violation| {
                let template = violation
                    .template
                    .map(|place| place.split('[').next().unwrap_or(place).to_owned());
                let rule = match violation.rule() {
                    single_owner_policy::Rule::Offer => "offer".to_owned(),
                    rule => rule.to_string(),
                };
                (violation.mark.to_string(), template, rule)
            })
            .collect()
    };
    match parsed.verdict(&NoHost) {
        Verdict::Allow | Verdict::Mutate(_) => Outcome::Allowed,
        Verdict::Deny(violations) => Outcome::Denied(broken(&violations)),
        Verdict::Exempt { violations, .. } => Outcome::Exempt(broken(&violations)),
        Verdict::Unreadable(_) => Outcome::Unreadable,
    }
}

/// Runs `test` on a thread with a stack deep enough for cel-rust, which evaluates the
/// policy's nested conditionals recursively (the API server's cel-go has no such limit short
/// of its own nesting limit, which the generated expressions stay far from).
pub fn deep(test: fn()) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(test)
        .unwrap()
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
}

/// Whether the API server evaluates a policy (or calls a webhook) with these rules for
/// `request`: its operation listed, its group listed or `*`, and its resource named as
/// `resource`, `resource/subresource`, `*` (any resource, no subresource) or `*/subresource`.
fn matched(rules: &[ResourceRule], request: &Value) -> bool {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
    let group = text(&request["resource"]["group"]);
    let resource = text(&request["resource"]["resource"]);
    let subresource = text(&request["subResource"]);
    let operation = text(&request["operation"]);
    rules.iter().any(|rule| {
        let names = |named: &String| {
            let (name, sub) = named.split_once('/').unwrap_or((named, ""));
            (name == "*" || name == resource) && sub == subresource
        };
        rule.operations.contains(&operation)
            && (rule.group == "*" || rule.group == group)
            && rule.resources.iter().any(names)
    })
}
