// The Node entry's offload writer: files under the working directory with native's safety
// rules. Paths are relative and '/'-separated, with no '.', '..' or empty parts; every folder
// on the way is created 0700 and checked with lstat (a symbolic link or a non-folder is
// refused, `.ctxkit` included); files are created exclusively (O_EXCL: a file or link planted at
// the next, predictable, name is never written through), opened with O_NOFOLLOW and written
// 0600, and a file with more than one hard link is refused on read (it may be a link to a file
// outside the folder). Node has no
// openat, so a folder swapped for a link between the check and the open is not caught (native
// ctxkit holds each folder open and is safe against that too).
'use strict';
const fs = require('node:fs');
const nodePath = require('node:path');

const { O_WRONLY, O_RDONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;

function parts(path) {
  if (typeof path !== 'string' || path === '') throw new Error(`offload path: expected a relative path, got ${JSON.stringify(path)}`);
  if (path.startsWith('/') || path.includes('\\') || path.includes('\0')) {
    throw new Error(`offload path: ${JSON.stringify(path)} must be relative and '/'-separated`);
  }
  const list = path.split('/');
  if (list.some((part) => part === '' || part === '.' || part === '..')) {
    throw new Error(`offload path: ${JSON.stringify(path)} has an empty, '.' or '..' part`);
  }
  return list;
}

function checkFolder(folder, shown) {
  const stat = fs.lstatSync(folder);
  if (stat.isSymbolicLink()) throw new Error(`offload path: ${shown} is a symbolic link; refused`);
  if (!stat.isDirectory()) throw new Error(`offload path: ${shown} is not a folder`);
}

/** Walks (and with `create`, makes 0700) the folders of `path` under `root`; returns the file's absolute path. */
function walk(root, path, create) {
  const list = parts(path);
  let folder = root;
  for (const [index, part] of list.slice(0, -1).entries()) {
    folder = nodePath.join(folder, part);
    const shown = list.slice(0, index + 1).join('/');
    if (create) {
      try {
        fs.mkdirSync(folder, { mode: 0o700 });
      } catch (error) {
        if (error.code !== 'EEXIST') throw error;
      }
    }
    checkFolder(folder, shown);
  }
  return nodePath.join(folder, list[list.length - 1]);
}

/**
 * An offload writer for `engine.setOffload` that keeps the files under `root` (default the
 * working directory), in `.ctxkit/tool_results/<session>/` with the default policy.
 */
function fileOffloadWriter(options = {}) {
  const root = nodePath.resolve(options.root ?? process.cwd());
  checkFolder(root, root);
  return {
    root,
    write(path, content) {
      const file = walk(root, path, true);
      let fd;
      try {
        fd = fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
      } catch (error) {
        if (error.code === 'EEXIST') {
          const kind = fs.lstatSync(file).isSymbolicLink() ? 'is a symbolic link' : 'already exists';
          throw new Error(`offload path: ${path} ${kind}; refused (offload files are never overwritten)`);
        }
        throw error;
      }
      try {
        fs.fchmodSync(fd, 0o600);
        fs.writeFileSync(fd, content, 'utf8');
      } finally {
        fs.closeSync(fd);
      }
    },
    read(path) {
      const file = walk(root, path, false);
      const fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW);
      try {
        const stat = fs.fstatSync(fd);
        if (!stat.isFile()) throw new Error(`offload path: ${path} is not a file; refused`);
        if (stat.nlink > 1) throw new Error(`offload path: ${path} has ${stat.nlink} hard links; refused (it may be a link to a file outside the folder)`);
        return fs.readFileSync(fd, 'utf8');
      } finally {
        fs.closeSync(fd);
      }
    },
  };
}

module.exports = { fileOffloadWriter };
