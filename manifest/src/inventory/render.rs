//! The inventory printed: a table for people, JSON for scripts.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Value, json};
use single_owner_policy::Rule;

use super::Inventory;

impl Inventory {
    /// How many objects some owner owns.
    pub fn owned(&self) -> usize {
        let mut owned = BTreeSet::new();
        for kinds in self.owners.values() {
            for (kind, names) in kinds {
                owned.extend(names.iter().map(|name| (kind, name)));
            }
        }
        owned.len()
    }

    /// The inventory as JSON, for scripts.
    pub fn json(&self) -> Value {
        let owners: Vec<Value> = (self.owners.iter())
            .map(|((mark, owner), kinds)| {
                json!({"mark": mark, "owner": owner, "objects": kinds,
                    "count": kinds.values().map(Vec::len).sum::<usize>()})
            })
            .collect();
        let findings: BTreeMap<&String, Vec<Value>> = (self.findings.iter())
            .map(|(rule, found)| {
                let found = (found.iter())
                    .map(|(object, message)| json!({"object": object, "message": message}))
                    .collect();
                (rule, found)
            })
            .collect();
        let leftovers: Vec<Value> = (self.leftovers.iter())
            .map(|left| {
                json!({"mark": left.mark, "owner": left.owner, "home": left.home,
                    "why": left.why, "objects": left.objects})
            })
            .collect();
        let out_of_step: Vec<Value> = (self.out_of_step.iter())
            .map(|[object, mark, owner, controller, carries]| {
                json!({"object": object, "mark": mark, "owner": owner,
                    "controller": controller, "controllerCarries": carries})
            })
            .collect();
        json!({
            "owners": owners,
            "findings": findings,
            "leftovers": leftovers,
            "unchecked": self.unchecked,
            "outOfStep": out_of_step,
            "summary": self.summary(),
        })
    }

    /// The counts the summary gives.
    fn summary(&self) -> Value {
        let count = |rule: Rule| self.findings.get(rule.name()).map_or(0, Vec::len);
        json!({
            "objects": self.objects,
            "owned": self.owned(),
            "owners": self.owners.len(),
            "conflicts": count(Rule::OneOwner),
            "staleOffers": count(Rule::Offer),
            "leftovers": self.leftovers.len(),
            "outOfStep": self.out_of_step.len(),
            "otherFindings": self.findings.values().map(Vec::len).sum::<usize>()
                - count(Rule::OneOwner) - count(Rule::Offer),
        })
    }

    /// The inventory as a table, for people.
    pub fn table(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "OWNERS");
        for ((mark, owner), kinds) in &self.owners {
            let count: usize = kinds.values().map(Vec::len).sum();
            let _ = writeln!(text, "{owner} ({mark}): {count}");
            for (kind, names) in kinds {
                let _ = writeln!(text, "  {kind} ({}): {}", names.len(), names.join(", "));
            }
        }
        let section = |text: &mut String, title: &str, lines: Vec<String>| {
            if !lines.is_empty() {
                let _ = writeln!(text, "\n{title}");
                for line in lines {
                    let _ = writeln!(text, "  {line}");
                }
            }
        };
        let found = |rule: Rule| {
            (self.findings.get(rule.name()).into_iter().flatten())
                .map(|(_, message)| message.clone())
                .collect()
        };
        section(
            &mut text,
            "CLAIMED BY TWO TOOLS' OWNERS",
            found(Rule::OneOwner),
        );
        section(&mut text, "STALE OFFERS", found(Rule::Offer));
        let others = (self.findings.iter())
            .filter(|(rule, _)| {
                rule.as_str() != Rule::OneOwner.name() && rule.as_str() != Rule::Offer.name()
            })
            .flat_map(|(_, found)| found.iter().map(|(_, message)| message.clone()))
            .collect();
        section(&mut text, "OTHER FINDINGS OF THE AUDIT", others);
        let leftovers = (self.leftovers.iter())
            .map(|left| {
                format!(
                    "{} ({}): {}: {}; objects left: {}",
                    left.owner, left.mark, left.home, left.why, left.objects
                )
            })
            .collect();
        section(&mut text, "LEFTOVERS", leftovers);
        let unchecked = (self.unchecked.iter())
            .map(|kind| format!("{kind}: not in the input, so its owners could not be told gone"))
            .collect();
        section(&mut text, "NOT CHECKED", unchecked);
        let out = (self.out_of_step.iter())
            .map(|[object, mark, owner, controller, carries]| {
                format!("{object}: {mark} {owner:?}, its controller {controller} carries {carries}")
            })
            .collect();
        section(&mut text, "OUT OF STEP WITH THEIR CONTROLLER", out);
        let summary = self.summary();
        let _ = writeln!(
            text,
            "\nSUMMARY: {} objects, {} owned by {} owners; {} claimed by two tools' owners, {} \
             stale offers, {} leftovers, {} out of step, {} other findings",
            summary["objects"],
            summary["owned"],
            summary["owners"],
            summary["conflicts"],
            summary["staleOffers"],
            summary["leftovers"],
            summary["outOfStep"],
            summary["otherFindings"]
        );
        text
    }
}
