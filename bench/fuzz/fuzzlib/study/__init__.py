"""The study fuzzer's scenarios: a declaration and its honest rows (declaration.py), the
files a perturbation rewrites (bundles.py, study_json.py), one scenario's steps and their
oracle (scenario.py, steps.py), the perturbations (tamper.py: the study's files changed between
steps; misuse.py: the commands run in ways the protocol refuses), the draw of a scenario
(plan.py) and the driver."""
