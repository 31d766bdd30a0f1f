//! The arguments of `./dev up` (`local-stack serve`), read strictly: an
//! argument it does not know is an error, never ignored (`--regions 2` once
//! started one region silently).

/// What `serve` was asked for.
#[derive(Debug, Default, PartialEq)]
pub struct ServeArgs {
    /// `--limits F`: DynamoDB's partition limits x F, simulated.
    pub limits: Option<f64>,
    /// `--hold MS` (with `--limits`): transactions hold their items this
    /// much longer (a higher rate's hold, at the local rate).
    pub hold_ms: u64,
}

impl ServeArgs {
    /// Reads `args` (after `serve`).
    pub fn parse(args: &[String]) -> Result<ServeArgs, String> {
        let mut out = ServeArgs::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--limits" => {
                    let factor = args.next().and_then(|f| f.parse::<f64>().ok()).filter(|f| *f > 0.0 && *f <= 1.0);
                    out.limits = Some(factor.ok_or("--limits needs a factor in (0, 1], such as 0.001")?);
                }
                "--hold" => {
                    let ms = args.next().and_then(|m| m.parse::<u64>().ok()).filter(|m| *m <= 10_000);
                    out.hold_ms = ms.ok_or("--hold needs milliseconds, 0 to 10000")?;
                }
                other => return Err(format!("./dev up: unknown argument `{other}` (it takes --limits F [--hold MS])")),
            }
        }
        if out.hold_ms > 0 && out.limits.is_none() {
            return Err("--hold goes with --limits F (the simulation holds the items)".to_owned());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<ServeArgs, String> {
        ServeArgs::parse(&args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn an_unknown_argument_is_refused_not_ignored() {
        assert_eq!(parse(&[]), Ok(ServeArgs { limits: None, hold_ms: 0 }));
        assert_eq!(parse(&["--limits", "0.5"]), Ok(ServeArgs { limits: Some(0.5), hold_ms: 0 }));
        assert_eq!(parse(&["--limits", "0.5", "--hold", "250"]), Ok(ServeArgs { limits: Some(0.5), hold_ms: 250 }));
        assert!(parse(&["--hold", "250"]).is_err(), "a hold without the simulation");
        assert!(parse(&["--regions", "2"]).is_err_and(|e| e.contains("`--regions`")));
        assert!(parse(&["--limits", "2"]).is_err());
        assert!(parse(&["--limits"]).is_err());
        assert!(parse(&["--limits", "0.5", "extra"]).is_err());
    }
}
