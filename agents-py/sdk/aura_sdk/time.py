"""Time as every aura agent reads and writes it (the Rust SDK's `aura_sdk::time`): RFC 3339
instants with an offset in and out, whole seconds since the Unix epoch inside, fixed UTC offsets
in minutes, "HH:MM" clock times. Integer arithmetic only; no clock is read."""

import re

SECS_PER_MINUTE = 60
MINUTES_PER_HOUR = 60
MINUTES_PER_DAY = 24 * MINUTES_PER_HOUR
SECS_PER_DAY = MINUTES_PER_DAY * SECS_PER_MINUTE
#: UTC offsets in use span −12:00..+14:00.
UTC_OFFSET_MINUTES_MAX = 840
#: The longest RFC 3339 text read (a date-time with nanoseconds and an offset is 35).
TIME_CHARS_MAX = 40

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))\Z"
)


def _days_from_civil(year: int, month: int, day: int) -> int:
    # Howard Hinnant's days_from_civil: days since 1970-01-01 of a proleptic Gregorian date.
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days: int):
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (month <= 2), month, day


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def try_parse_time(text: str):
    """Unix seconds of an RFC 3339 date-time with offset (fractions floored), or None."""
    if not isinstance(text, str) or len(text) > TIME_CHARS_MAX:
        return None
    match = _RFC3339.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)):
        return None
    if hour > 23 or minute > 59 or second > 60:
        return None
    offset = 0
    if match.group(9):
        off_h, off_m = int(match.group(10)), int(match.group(11))
        if off_h > 23 or off_m > 59:
            return None
        offset = (off_h * 60 + off_m) * (1 if match.group(9) == "+" else -1)
    # A leap second reads as the last second before it.
    second = min(second, 59)
    local = _days_from_civil(year, month, day) * SECS_PER_DAY + hour * 3600 + minute * 60 + second
    return local - offset * SECS_PER_MINUTE


def parse_time(text: str, field: str) -> int:
    """Unix seconds of an RFC 3339 date-time with offset, or invalid_args naming `field`."""
    from . import ToolError, quoted

    if isinstance(text, str) and len(text) > TIME_CHARS_MAX:
        raise ToolError.invalid_args(f"{field}: longer than {TIME_CHARS_MAX} characters")
    secs = try_parse_time(text)
    if secs is None:
        raise ToolError.invalid_args(f"{field}: {quoted(text)} is not an RFC 3339 date-time with offset")
    return secs


def offset_minutes_of(value):
    """A UTC offset in minutes read leniently from a context (an integer within
    ±UTC_OFFSET_MINUTES_MAX), or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if abs(value) <= UTC_OFFSET_MINUTES_MAX else None


def check_offset(offset_minutes: int, field: str) -> None:
    from . import check_range

    check_range(offset_minutes, field, -UTC_OFFSET_MINUTES_MAX, UTC_OFFSET_MINUTES_MAX)


def format_time(unix_secs: int, offset_minutes: int) -> str:
    """RFC 3339 text of an instant at a fixed offset ("Z" at zero), whole seconds."""
    local = unix_secs + offset_minutes * SECS_PER_MINUTE
    days, secs = divmod(local, SECS_PER_DAY)
    year, month, day = _civil_from_days(days)
    if offset_minutes == 0:
        zone = "Z"
    else:
        sign = "+" if offset_minutes > 0 else "-"
        zone = f"{sign}{abs(offset_minutes) // 60:02}:{abs(offset_minutes) % 60:02}"
    return (f"{year:04}-{month:02}-{day:02}T{secs // 3600:02}:{secs // 60 % 60:02}:"
            f"{secs % 60:02}{zone}")


def format_date(day: int) -> str:
    """"YYYY-MM-DD" of a day counted from 1970-01-01."""
    year, month, day_of_month = _civil_from_days(day)
    return f"{year:04}-{month:02}-{day_of_month:02}"


def _hh_mm_parts(text):
    if not isinstance(text, str) or len(text) != 5 or text[2] != ":":
        return None
    digits = text[:2] + text[3:]
    if not all("0" <= c <= "9" for c in digits):
        return None
    return int(text[:2]), int(text[3:])


def parse_hh_mm(text: str, field: str) -> int:
    """Minutes of day of "HH:MM" (00:00..24:00), or invalid_args naming `field`."""
    from . import ToolError, quoted

    parts = _hh_mm_parts(text)
    if parts is not None:
        hours, minutes = parts
        if (hours < 24 and minutes < 60) or parts == (24, 0):
            return hours * MINUTES_PER_HOUR + minutes
    raise ToolError.invalid_args(f'{field}: {quoted(text)} is not a time "HH:MM" (00:00..24:00)')


def weekday_of_day(day: int) -> int:
    """ISO weekday (1 Monday .. 7 Sunday) of a day counted from 1970-01-01 (a Thursday)."""
    return (day + 3) % 7 + 1


def format_hh_mm(minute_of_day: int) -> str:
    minute = minute_of_day % MINUTES_PER_DAY
    return f"{minute // MINUTES_PER_HOUR:02}:{minute % MINUTES_PER_HOUR:02}"


def minutes_floor(secs: int) -> int:
    return secs // SECS_PER_MINUTE


def minutes_ceil(secs: int) -> int:
    return minutes_floor(secs) + (secs % SECS_PER_MINUTE != 0)


def local_day(unix_secs: int, offset_minutes: int) -> int:
    return (unix_secs + offset_minutes * SECS_PER_MINUTE) // SECS_PER_DAY


def local_minute_of_day(unix_secs: int, offset_minutes: int) -> int:
    return (unix_secs + offset_minutes * SECS_PER_MINUTE) % SECS_PER_DAY // SECS_PER_MINUTE


def local_instant(day: int, minute: int, offset_minutes: int) -> int:
    return day * SECS_PER_DAY + minute * SECS_PER_MINUTE - offset_minutes * SECS_PER_MINUTE
