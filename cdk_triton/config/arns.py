"""KMS key references: one validator for ``models.yaml``, the manifest and the constructs' ARN strings.

The artifacts' key is named in an IAM policy (``kms:Decrypt`` on the model's role, the build's
``kms:GenerateDataKey``): IAM matches a key's ARN only, so an alias name (``alias/x``), an alias ARN
(``arn:aws:kms:...:alias/x``) or a bare key id grants nothing and the endpoint fails to load its model
long after deploy. Only a key ARN is accepted:
``arn:<partition>:kms:<region>:<12-digit account>:key/<key id>``, the key id a UUID or a multi-Region
``mrk-`` + 32 hex (KMS API reference: KeyMetadata.Arn, MultiRegionKey; region pattern
``^([a-z]+-){2,3}\\d+$``). The partition must agree with the region (``aws-cn`` with ``cn-*``,
``aws-us-gov`` with ``us-gov-*``). Pure; standard library only.
"""

from __future__ import annotations

import re

from cdk_triton.errors import TritonValidationError

#: AWS partitions and the region prefix each requires (``None``: a commercial region).
PARTITIONS: dict[str, tuple[str, ...] | None] = {
    "aws": None,
    "aws-cn": ("cn-",),
    "aws-us-gov": ("us-gov-",),
    "aws-iso": ("us-iso-",),
    "aws-iso-b": ("us-isob-",),
    "aws-iso-e": ("eu-isoe-",),
    "aws-iso-f": ("us-isof-",),
    "aws-eusc": ("eusc-",),
}
REGION = re.compile(r"^([a-z]+-){2,3}\d+$")
ACCOUNT = re.compile(r"^\d{12}$")
KEY_ID = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})$")
KEY_ARN_FORM = "arn:<partition>:kms:<region>:<12-digit account>:key/<key id (UUID or mrk-<32 hex>)>"
EXAMPLE = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def kms_key_arn_problem(value: object) -> tuple[str, str] | None:
    """Why ``value`` is not a KMS key ARN, as (problem, fix); None when it is one."""
    if not isinstance(value, str):
        return f"is a {type(value).__name__}, not a string", f"write the key ARN as a string, e.g. {EXAMPLE}"
    v = value
    if v != v.strip() or not v:
        return "is empty or has surrounding whitespace", "remove the whitespace"
    if v.startswith("alias/") or (v.startswith("arn:") and ":alias/" in v):
        return (
            "names a KMS alias; IAM policies match the key's ARN only, so a grant on an alias gives no access",
            "use the ARN of the key the alias points to (`aws kms describe-key --key-id <alias> "
            "--query KeyMetadata.Arn`)",
        )
    if KEY_ID.fullmatch(v):
        return (
            "is a bare key id, not an ARN",
            f"write the full key ARN, e.g. arn:aws:kms:<region>:<account>:key/{v}",
        )
    parts = v.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn":
        return "is not an ARN", f"write the key's ARN, e.g. {EXAMPLE}"
    _, partition, service, region, account, resource = parts
    if partition not in PARTITIONS:
        return (
            f"has partition '{partition}'",
            f"use one of {', '.join(PARTITIONS)} (aws for commercial regions)",
        )
    if service != "kms":
        return f"is an ARN of service '{service}', not of KMS", "give the ARN of the KMS key itself"
    if not REGION.fullmatch(region):
        return f"has region '{region}', not a region name", "write the key's region, e.g. us-east-1"
    prefixes = PARTITIONS[partition]
    commercial = not any(region.startswith(p) for ps in PARTITIONS.values() if ps for p in ps)
    if (prefixes is None and not commercial) or (prefixes is not None and not region.startswith(prefixes)):
        return (
            f"pairs partition '{partition}' with region '{region}'",
            "use the partition of the region (aws-cn for cn-*, aws-us-gov for us-gov-*, aws otherwise)",
        )
    if not ACCOUNT.fullmatch(account):
        return f"has account '{account}', not 12 digits", "write the 12-digit account id that owns the key"
    kind, _, key_id = resource.partition("/")
    if kind != "key" or not KEY_ID.fullmatch(key_id):
        return (
            f"has resource '{resource}', not key/<key id>",
            "end the ARN with key/ and the key id (a UUID, or mrk- and 32 hex for a multi-Region key)",
        )
    return None


def check_kms_key_arn(value: object, *, prop: str, path: str | None = None) -> TritonValidationError | None:
    """An ``InvalidKmsKeyArn`` error when ``value`` is not a KMS key ARN (see the module docstring)."""
    found = kms_key_arn_problem(value)
    if found is None:
        return None
    problem, fix = found
    return TritonValidationError(
        "InvalidKmsKeyArn", prop=prop, value=value, problem=problem, allowed=KEY_ARN_FORM, fix=fix, path=path
    )


#: what an account id must look like wherever one is accepted
ACCOUNT_FORM = "12-digit account ids as strings, e.g. '111111111111' (a leading 0 counts)"


def account_id_problems(
    prop: str, values: object, *, path: str | None = None, skip: object = None
) -> list[TritonValidationError]:
    """``InvalidAccountId`` for the values of ``values`` (one id or a list) that are not 12 digits: a
    promotion stage's account, a model package group's read/write accounts, a bucket or key policy's
    accounts. ``skip(value)`` True leaves a value unjudged (an unresolved CDK token)."""
    items = list(values) if isinstance(values, (list, tuple, set, frozenset)) else [values]
    wrong = [v for v in items if not (skip is not None and skip(v)) and not ACCOUNT.fullmatch(str(v))]  # type: ignore[operator]
    if not wrong:
        return []
    return [
        TritonValidationError(
            "InvalidAccountId",
            prop=prop,
            value=wrong[0] if not isinstance(values, (list, tuple, set, frozenset)) else wrong,
            problem="is not an AWS account id"
            if len(wrong) == 1
            else "holds values that are not AWS account ids",
            allowed=ACCOUNT_FORM,
            fix="write the 12-digit id of the account (quoted, so that a leading 0 stays)",
            path=path,
        )
    ]
