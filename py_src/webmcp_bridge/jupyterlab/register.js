// register.js: puts the registry's tool definitions on document.modelContext, all calling one Python dispatcher.
// Evaluated by webmcp.py; the value is a function. Each tool's execute sends the input as JSON text and parses
// the JSON text of the MCP CallToolResult that comes back, so a call crosses into Python exactly once.
(modelContext, definitionsJson, dispatch, signal) => {
  const definitions = JSON.parse(definitionsJson);
  for (const definition of definitions) {
    const execute = async (input) => JSON.parse(await dispatch(definition.name, JSON.stringify(input ?? {})));
    modelContext.registerTool({ ...definition, execute }, { signal });
  }
  return definitions.length;
}
