# RFC 3339 timestamps exactly as a Rust server with `time::serde::rfc3339` reads and re-writes them: the signed bytes
# carry the re-written text, not the text the client sent.
from __future__ import annotations

import calendar
import re
from datetime import datetime, timezone

from .bincode import value_invalid

RFC3339_TEXT_LENGTH_MAX = 64
_PATTERN = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$")


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 else 28
    return 30 if month in (4, 6, 9, 11) else 31


def normalize_rfc3339(text: object, field: str) -> str:
    """The RFC 3339 text a Rust server would sign for `text` (fraction trimmed, a zero offset written `Z`)."""
    if not isinstance(text, str) or len(text) > RFC3339_TEXT_LENGTH_MAX:
        raise value_invalid(field, "must be an RFC 3339 timestamp")
    match = _PATTERN.match(text)
    if not match:
        raise value_invalid(field, "must be an RFC 3339 timestamp (YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM))")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    # Digits past the ninth are read and dropped, as the time crate does (it truncates, it does not round).
    nanosecond = int((match.group(7) or "")[:9].ljust(9, "0"))
    offset_sign = -1 if match.group(9) == "-" else 1
    offset_hours = 0 if match.group(8) else int(match.group(10))
    offset_minutes_part = 0 if match.group(8) else int(match.group(11))
    if not 1 <= month <= 12:
        raise value_invalid(field, "has a month outside 01-12")
    if not 1 <= day <= _days_in_month(year, month):
        raise value_invalid(field, "has a day that does not exist in its month")
    if hour > 23 or minute > 59 or second > 60:
        raise value_invalid(field, "has a time of day out of range")
    if offset_hours > 23 or offset_minutes_part > 59:
        raise value_invalid(field, "has an offset out of range")
    offset_minutes = offset_sign * (offset_hours * 60 + offset_minutes_part)
    # The time crate has no leap seconds: :60 stands for the last nanosecond of :59, and only where a leap second
    # can be, the last second of a month in UTC.
    if second == 60:
        second, nanosecond = 59, 999_999_999
        utc_seconds = calendar.timegm((year, month, day, hour, minute, second)) - offset_minutes * 60
        moment = datetime.fromtimestamp(utc_seconds, timezone.utc)
        following = datetime.fromtimestamp(utc_seconds + 1, timezone.utc)
        if (moment.hour, moment.minute, moment.second) != (23, 59, 59) or following.month == moment.month:
            raise value_invalid(field, "has a leap second where none can be")
    fraction = "" if nanosecond == 0 else "." + f"{nanosecond:09d}".rstrip("0")
    if offset_minutes == 0:
        zone = "Z"
    else:
        magnitude = abs(offset_minutes)
        zone = f"{'-' if offset_minutes < 0 else '+'}{magnitude // 60:02d}:{magnitude % 60:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}{fraction}{zone}"


def format_rfc3339_seconds_utc(moment: datetime | float) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ` for a datetime (naive means UTC) or Unix seconds, the fraction dropped."""
    if isinstance(moment, datetime):
        moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
        seconds = calendar.timegm(moment.utctimetuple())
    else:
        seconds = int(moment // 1)
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
