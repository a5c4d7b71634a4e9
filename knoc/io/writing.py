"""Writing inside the repo (`init`, `new`, `import`, `migrate`, `specs
vendor`): only into the repo's own folders, through directory descriptors
opened without following links, so a link planted where a folder or a
file belongs (a `.gitignore` pointing at ~/.bashrc, a collection folder
pointing at another repo) is refused, never written through."""

from __future__ import annotations

import contextlib
import errno
import os
import stat as stat_
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from knoc.io.files import Exists, Refused


class Unsafe(Refused):
    """A write knoc refuses: through a link, or where a folder belongs but a file is."""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _plain(parts: list[str], rel: str) -> None:
    """Refuse (Unsafe) a path that is not plain: a `..` climbs out of the
    folder it is below, links or not."""
    if any(part in ("", ".", "..") for part in parts):
        raise Unsafe(f"{rel} is not a plain path below the folder it is written in", "name a path without `..`")


def writable(root: Path, rel: str, file_too: bool = True) -> None:
    """Refuse (Unsafe) unless `rel` can be written inside `root` without
    following a link: each folder on the way is a real folder or missing,
    and (`file_too`) the file itself is not a link. Checks only; `write_in`
    checks again."""
    parts = rel.split("/")
    _plain(parts, rel)
    for i in range(1, len(parts) + (1 if file_too else 0)):
        here = root.joinpath(*parts[:i])
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            return
        if stat_.S_ISLNK(st.st_mode):
            raise Unsafe(f"{'/'.join(parts[:i])} is a link: knoc writes only inside the repo's own folders",
                         "replace the link with a folder (or the file it points to), or remove it")
        if i < len(parts) and not stat_.S_ISDIR(st.st_mode):
            raise Unsafe(f"{'/'.join(parts[:i])} is a file where knoc needs a folder", "move it away")


@contextmanager
def _folder_of(root: Path, rel: str, file_too: bool = True) -> Iterator[tuple[int, str]]:
    """The folder `rel` lies in, open without following links (made where
    missing), and the file's name in it."""
    writable(root, rel, file_too)
    *folders, name = rel.split("/")
    root.mkdir(parents=True, exist_ok=True)
    top = os.open(root, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))  # the root itself: the user named it
    try:
        fd = descend(top, folders, rel)
    finally:
        os.close(top)
    try:
        yield fd, name
    finally:
        os.close(fd)


def descend(top: int, folders: list[str], rel: str, make: bool = True) -> int:
    """A new descriptor of the folder `folders` below the open folder `top`,
    each opened without following a link (and, with `make`, made where
    missing). Unsafe where one is a link or a file."""
    _plain(folders, rel)
    fd = os.dup(top)
    try:
        for folder in folders:
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, 0o777, dir_fd=fd)
            try:
                inner = os.open(folder, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise Unsafe(f"{folder} in {rel} is a link or a file: knoc writes only inside the repo's own "
                                 "folders", "replace it with a folder") from None
                raise
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_in(root: Path, rel: str, data: bytes, replace: bool = False) -> None:
    """Write `data` to `rel` inside `root`, never through a link. Without
    `replace` an existing file is never touched (the check and the create
    are one step: O_EXCL, which a dangling link also fails); with it, a
    regular file is replaced atomically and keeps its mode."""
    with _folder_of(root, rel) as (fd, name):
        mode = 0o666  # less the umask, as open() does
        st = None
        if replace:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and not stat_.S_ISREG(st.st_mode):
                raise Unsafe(f"{rel} is not a regular file (a link?): knoc replaces only files",
                             "remove it, then run the command again")
            if st is not None:
                mode = stat_.S_IMODE(st.st_mode)
        target = f".{name}.{os.getpid()}.tmp" if replace else name
        try:
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                          | getattr(os, "O_CLOEXEC", 0), mode, dir_fd=fd)
        except FileExistsError:
            raise Exists(str(root / rel)) from None
        try:
            with os.fdopen(out, "wb") as f:
                f.write(data)
                if replace and st is not None:
                    os.fchmod(f.fileno(), mode)  # the old file's mode: the umask is not its business
            if replace:
                os.replace(target, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(target, dir_fd=fd)
            raise


def append_in(root: Path, rel: str, text: str) -> None:
    """Add `text` at the end of a file inside `root` (made if missing), on a
    line of its own, never through a link. A file with other hard links is
    replaced instead, so the file they name elsewhere is left as it is."""
    with _folder_of(root, rel) as (fd, name):
        out = os.open(name, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
                      | getattr(os, "O_CLOEXEC", 0), 0o666, dir_fd=fd)
        with os.fdopen(out, "r+b") as f:
            st = os.fstat(f.fileno())
            if not stat_.S_ISREG(st.st_mode):
                raise Unsafe(f"{rel} is not a regular file", "remove it")
            if st.st_nlink > 1:
                held = f.read()
            else:
                size = f.seek(0, os.SEEK_END)
                if size:
                    f.seek(size - 1)
                    if f.read(1) != b"\n":
                        f.write(b"\n")
                f.write(text.encode("utf-8"))
                return
    write_in(root, rel, held + (b"\n" if held and not held.endswith(b"\n") else b"") + text.encode("utf-8"),
             replace=True)


def remove_in(root: Path, rel: str) -> None:
    """Remove the file `rel` inside `root`, never through a linked folder
    (a link there is removed itself, never what it points to)."""
    with _folder_of(root, rel, file_too=False) as (fd, name):
        os.unlink(name, dir_fd=fd)
