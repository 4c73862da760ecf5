-- A real client for `alpine lsp`: Neovim (0.7, Debian's) in headless mode opens
-- $ALPINE_PVL, starts `$ALPINE_BIN lsp`, asks for the code actions on the first
-- `while` loop, applies "Unroll ×2" and writes the buffer. tests/lsp.rs runs it
-- and verifies the written file. Any failure exits with status 1 (cquit) after
-- a message on stderr, so that the test never hangs on an error.
local function fail(msg)
  io.stderr:write("nvim_unroll.lua: " .. msg .. "\n")
  vim.cmd("cquit 1")
end

local ok, err = pcall(function()
  local alpine, file = os.getenv("ALPINE_BIN"), os.getenv("ALPINE_PVL")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "alpine",
    cmd = { alpine, "lsp" },
    root_dir = vim.fn.fnamemodify(file, ":h"),
  })
  if not client_id then return fail("vim.lsp.start_client failed") end
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  if not vim.wait(30000, function() return client.initialized end, 20) then
    return fail("the server did not initialize")
  end

  -- The first loop: its line and the column of `while`.
  local row, col
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local c = line:find("while%s*%(")
    if c then row, col = i - 1, c - 1 break end
  end
  if not row then return fail("no while loop in " .. file) end
  local pos = { line = row, character = col }
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = pos, ["end"] = pos },
    context = { diagnostics = {} },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", params, 120000)
  if not responses then return fail("no answer to textDocument/codeAction") end
  local action, titles = nil, {}
  for _, r in pairs(responses) do
    if r.error then return fail("codeAction error: " .. vim.inspect(r.error)) end
    for _, a in ipairs(r.result or {}) do
      table.insert(titles, a.title)
      if a.title == "Unroll ×2" then action = a end
    end
  end
  io.stderr:write("code actions: " .. table.concat(titles, ", ") .. "\n")
  if not action then return fail("no \"Unroll ×2\" action") end
  if not action.edit then
    local r = client.request_sync("codeAction/resolve", action, 120000, bufnr)
    action = r and r.result or action
  end
  if not action.edit then return fail("the action has no edit") end
  vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  vim.cmd("write")
  vim.lsp.stop_client(client_id)
  vim.cmd("qall!")
end)
if not ok then fail(tostring(err)) end
